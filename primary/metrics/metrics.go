package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/turncli/turncli/internal/fault"
	imetrics "github.com/turncli/turncli/internal/metrics"
	"github.com/turncli/turncli/primary/response"
)

const ns = imetrics.Namespace

// Metrics is the primary's registry and the observers engines are built with.
type Metrics struct {
	Registry *prometheus.Registry
	GRPC     *imetrics.GRPC
	HTTP     *imetrics.HTTP

	calls      *prometheus.HistogramVec
	callsByEnd [response.Cancelled + 1]prometheus.Observer
	operations *prometheus.CounterVec
	opsCache   opCache
	storeTx    [2]prometheus.Observer // ok, error

	surfaceDeliveries *prometheus.CounterVec
}

// New returns the primary's metrics, before any engine exists: the engines are built with its
// observers, then Watch adds the collectors that read them.
func New() *Metrics {
	reg := imetrics.NewRegistry()
	m := &Metrics{Registry: reg, GRPC: imetrics.NewGRPCServer(reg), HTTP: imetrics.NewHTTP(reg)}
	m.calls = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: ns, Subsystem: "agent_cli", Name: "call_duration_seconds",
		Help:    "Time from a tool call's admission to its terminal status, by that status.",
		Buckets: imetrics.LatencyBuckets,
	}, []string{"status"})
	for _, s := range []response.Status{response.Completed, response.Failed, response.Cancelled} {
		m.callsByEnd[s] = m.calls.WithLabelValues(s.String())
	}
	m.operations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: "agent_cli", Name: "operations_total",
		Help: "Agent CLI requests answered, by operation kind (calls.get for a receipt read) and outcome (ok, or the error's kind).",
	}, []string{"kind", "outcome"})
	m.opsCache.vec = m.operations
	storeTx := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: ns, Subsystem: "store", Name: "transaction_duration_seconds",
		Help:    "Latency of the store's transactions that change state, retries included, by outcome.",
		Buckets: imetrics.LatencyBuckets,
	}, []string{"outcome"})
	m.storeTx = [2]prometheus.Observer{storeTx.WithLabelValues("ok"), storeTx.WithLabelValues("error")}
	m.surfaceDeliveries = newSurfaceDeliveries()
	reg.MustRegister(m.calls, m.operations, storeTx, m.surfaceDeliveries, leaderGauge(true))
	return m
}

// CallSettled implements response.Observer.
func (m *Metrics) CallSettled(s response.Status, d time.Duration) {
	if s.Terminal() && int(s) < len(m.callsByEnd) {
		m.callsByEnd[s].Observe(d.Seconds())
	}
}

// Operation implements the Agent CLI adapter's Observer.
func (m *Metrics) Operation(kind string, err error) {
	m.opsCache.get(kind, Outcome(err)).Inc()
}

// ObserveTransaction is the store's transaction observer.
func (m *Metrics) ObserveTransaction(d time.Duration, err error) {
	i := 0
	if err != nil {
		i = 1
	}
	m.storeTx[i].Observe(d.Seconds())
}

// Outcome is the label of a request's end: "ok", the fault kind of its error, "cancelled"
// when the caller went away, "internal" for anything else.
func Outcome(err error) string {
	if err == nil {
		return "ok"
	}
	if k, ok := fault.KindOf(err); ok {
		return k.String()
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return "cancelled"
	}
	return fault.Internal.String()
}
