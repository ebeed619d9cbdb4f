package worker

import (
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/turncli/turncli/internal/agentclihttp"
	"github.com/turncli/turncli/internal/logging"
	imetrics "github.com/turncli/turncli/internal/metrics"
	"github.com/turncli/turncli/internal/readiness"
	"github.com/turncli/turncli/sandboxproxy"
)

// workerMetrics is the worker's metrics home: its registry with the gRPC client series of its
// connection to the primary, the sandbox proxy's HTTP series, its own state read at scrape
// time, and its readiness (connected to the primary).
type workerMetrics struct {
	registry  *prometheus.Registry
	grpc      *imetrics.GRPC
	http      *imetrics.HTTP
	connected *readiness.Flag
	ready     *readiness.Checker
	inFlight  atomic.Int64 // commands running for the primary
}

func newWorkerMetrics(capacity int) *workerMetrics {
	reg := imetrics.NewRegistry()
	m := &workerMetrics{registry: reg, grpc: imetrics.NewGRPCClient(reg), http: imetrics.NewHTTP(reg),
		connected: readiness.NewFlag("not connected to the primary")}
	m.ready = readiness.New(nil, m.connected.Check("primary"))
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: imetrics.Namespace, Subsystem: "worker", Name: "connected",
			Help: "1 while the worker is connected to (welcomed by) the primary, else 0."}, func() float64 {
			if m.connected.IsSet() {
				return 1
			}
			return 0
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: imetrics.Namespace, Subsystem: "worker", Name: "capacity_commands",
			Help: "Commands the worker runs at once (0: no limit)."}, func() float64 { return float64(capacity) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: imetrics.Namespace, Subsystem: "worker", Name: "commands_in_flight",
			Help: "Commands running on the worker for the primary."}, func() float64 { return float64(m.inFlight.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: imetrics.Namespace, Subsystem: "worker", Name: UtilizationMetric,
			Help: "Commands in flight over capacity, 0 to 1 (0 when capacity is unlimited): the autoscaling signal."},
			func() float64 { return utilization(m.inFlight.Load(), capacity) }),
	)
	return m
}

// UtilizationMetric names the gauge of commands in flight over capacity, without the
// turncli_worker_ prefix: the series an autoscaler of workers targets
// (turncli_worker_utilization_ratio).
const UtilizationMetric = "utilization_ratio"

// utilization is inFlight over capacity, at most 1; 0 for an unlimited worker, which is never
// full.
func utilization(inFlight int64, capacity int) float64 {
	if capacity <= 0 {
		return 0
	}
	return min(float64(inFlight)/float64(capacity), 1)
}

// proxy instruments the sandbox proxy's handler.
func (m *workerMetrics) proxy(h http.Handler) http.Handler {
	return m.http.Static("sandbox_proxy", agentclihttp.Route, h)
}

// serveMetrics serves /metrics, /healthz and /readyz on the metrics listener, if there is one,
// and returns the function that stops it.
func (w *Worker) serveMetrics() (stop func()) {
	if w.metricsLis == nil {
		return func() {}
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", imetrics.Handler(w.metrics.registry))
	w.metrics.ready.Handle(mux)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: sandboxproxy.IdleTimeout,
		ErrorLog: logging.HTTPServerLog(w.cfg.Logger)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(w.metricsLis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			w.cfg.Logger.Error("metrics listener failed", "err", err)
		}
	}()
	return func() {
		_ = srv.Close()
		<-done
	}
}
