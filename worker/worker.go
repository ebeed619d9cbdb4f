package worker

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/turncli/turncli/internal/outage"
	"github.com/turncli/turncli/internal/readiness"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/internal/agentclihttp"
	"github.com/turncli/turncli/internal/backoff"
	"github.com/turncli/turncli/internal/buildinfo"
	"github.com/turncli/turncli/internal/connlimit"
	"github.com/turncli/turncli/internal/leaderconn"
	"github.com/turncli/turncli/internal/shellhost"
	"github.com/turncli/turncli/sandboxproxy"
	"github.com/turncli/turncli/worker/jobs"
)

// Worker is an assembled worker, ready to Run.
type Worker struct {
	cfg        Config
	proxyLis   net.Listener
	metricsLis net.Listener // nil: no metrics listener
	shells     *shellhost.Runner
	conn       *leaderconn.Conn // the primaries: calls go to the one followed
	client     workerv1.WorkerServiceClient
	jobs       *jobs.Manager // set by Run
	metrics    *workerMetrics
	tracer     trace.Tracer
	outage     *outage.Log // what the connect loop has logged of a lost primary
}

// New builds a worker whose sandbox proxy serves on proxyLis. extra dial options are for tests
// (a bufconn dialer).
func New(cfg Config, proxyLis net.Listener, extra ...grpc.DialOption) (*Worker, error) {
	return NewWithMetrics(cfg, proxyLis, nil, extra...)
}

// NewWithMetrics builds a worker as New does that also serves /metrics, /healthz and /readyz
// on metricsLis.
func NewWithMetrics(cfg Config, proxyLis, metricsLis net.Listener, extra ...grpc.DialOption) (*Worker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := newWorkerMetrics(cfg.Capacity)
	// Shells reach the proxy on loopback; the limiter counts each agent's user apart.
	limits := cfg.Logger.With("component", "connections")
	proxyLis = connlimit.New(cfg.Connections, limits).Wrap(proxyLis, connlimit.HTTP1)
	if metricsLis != nil {
		metricsLis = connlimit.New(connlimit.ProbeConfig, limits).Wrap(metricsLis, connlimit.HTTP1)
	}
	transport := insecure.NewCredentials()
	if cfg.TLSCAFile != "" {
		pem, err := os.ReadFile(cfg.TLSCAFile)
		if err != nil {
			return nil, fmt.Errorf("tls ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errors.New("tls ca: no certificates found")
		}
		transport = credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
	}
	opts := append([]grpc.DialOption{
		grpc.WithTransportCredentials(transport),
		grpc.WithPerRPCCredentials(sandboxproxy.Identity{Credential: cfg.Credential, WorkerID: cfg.ID, Insecure: cfg.TLSCAFile == ""}),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 10 * time.Second, Timeout: 5 * time.Second, PermitWithoutStream: true}),
		grpc.WithChainUnaryInterceptor(m.grpc.UnaryClientInterceptor()),
		grpc.WithChainStreamInterceptor(m.grpc.StreamClientInterceptor()),
		// The proxy's forwarded calls carry their request's trace to the primary.
		grpc.WithStatsHandler(cfg.Telemetry.GRPCClientHandler()),
	}, extra...)
	conn, err := leaderconn.New(context.Background(), cfg.PrimaryAddr, opts...)
	if err != nil {
		return nil, err
	}
	proxyURL := "http://" + proxyLis.Addr().String()
	iso, isoStatus, err := cfg.Shells.Isolation.Build(cfg.StateDir)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("isolation: %w", err)
	}
	if isoStatus.Isolated {
		cfg.Logger.Info("shells are isolated", "detail", isoStatus.Detail)
	} else {
		cfg.Logger.Warn("shells are not isolated", "detail", isoStatus.Detail)
	}
	m.ready.Note("isolation", isoStatus.Detail)
	shells, err := shellhost.New(shellhost.Config{
		Settings: cfg.Shells,
		StateDir: cfg.StateDir, Sandboxing: iso, AgentCLIURL: proxyURL,
	})
	if err != nil {
		conn.Close()
		return nil, err
	}
	m.ready.Add(readiness.Check{Name: "disk", Probe: func(context.Context) error { return shells.CheckDisk() }})
	return &Worker{cfg: cfg, proxyLis: proxyLis, metricsLis: metricsLis, shells: shells, conn: conn,
		client: workerv1.NewWorkerServiceClient(conn), metrics: m, tracer: cfg.Telemetry.Tracer("github.com/turncli/turncli/worker")}, nil
}

// MetricsURL is the origin of /metrics, /healthz and /readyz; empty without a metrics listener.
func (w *Worker) MetricsURL() string {
	if w.metricsLis == nil {
		return ""
	}
	return "http://" + w.metricsLis.Addr().String()
}

// ProxyURL is the sandbox proxy's origin, the MINDROOM_AGENT_CLI_URL of this worker's shells.
func (w *Worker) ProxyURL() string { return "http://" + w.proxyLis.Addr().String() }

// Run serves the sandbox proxy and keeps the connection to the primary until ctx ends; then it
// stops its commands and closes everything. Background jobs keep running after Run returns.
func (w *Worker) Run(ctx context.Context) error {
	defer w.conn.Close()
	// Jobs are taken over before the first Hello, which reports them.
	jm, err := jobs.Open(jobs.Config{
		Dir: filepath.Join(w.cfg.StateDir, "jobs"), Shells: w.shells, AgentCLIURL: w.ProxyURL(),
		Logger: w.cfg.Logger.With("component", "jobs"),
	})
	if err != nil {
		w.proxyLis.Close()
		return err
	}
	w.jobs = jm
	defer jm.Close()                     // the jobs run on; the next worker on this state dir takes them over
	ctx, stop := context.WithCancel(ctx) // a refused worker stops its proxy too
	defer stop()
	var wg sync.WaitGroup
	proxyErr := make(chan error, 1)
	traced := func(h http.Handler) http.Handler { return w.cfg.Telemetry.HTTPHandler(h, agentclihttp.Route) }
	wg.Go(func() {
		proxyErr <- sandboxproxy.Serve(ctx, w.proxyLis, w.conn, w.cfg.Logger.With("component", "sandboxproxy"), traced, w.metrics.proxy)
	})
	stopMetrics := w.serveMetrics()
	defer stopMetrics()
	refused := w.connectLoop(ctx)
	w.metrics.ready.Shutdown() // not ready while the proxy and the commands stop
	stop()
	wg.Wait()
	if refused != nil {
		return refused
	}
	return <-proxyErr
}

// connectLoop keeps one session with the primary, reconnecting with jittered exponential
// backoff, until ctx ends (nil) or the primary refuses this worker (a *RefusedError). Given
// several primaries it tries each in turn (a standby answers Unavailable) and backs off only
// after a whole round failed.
func (w *Worker) connectLoop(ctx context.Context) error {
	p := backoff.Policy{Min: w.cfg.MinBackoff, Max: w.cfg.MaxBackoff}
	round := func(ctx context.Context) (bool, error) {
		return w.conn.Round(ctx, w.session, refusal, func(failed string, err error) {
			w.cfg.Logger.Info("trying the next primary", "failed", failed, "err", err, "next", w.conn.Addr())
		})
	}
	w.outage = outage.New(w.cfg.Logger)
	err := p.Loop(ctx, round, refusal, w.outage.Failed)
	if err != nil {
		return &RefusedError{Code: status.Code(err), Message: status.Convert(err).Message()}
	}
	return nil
}

// refusal reports whether the primary refused this worker in a way no reconnect can change:
// its credential, the key it claims, or what it sent. Anything else (the primary restarting,
// the network) is worth a retry.
func refusal(err error) bool {
	switch status.Code(err) {
	case codes.Unauthenticated, codes.PermissionDenied, codes.InvalidArgument:
		return true
	}
	return false
}

// RefusedError is the primary refusing this worker: a wrong credential (Unauthenticated), a
// credential of another worker key (PermissionDenied) or a Hello it does not accept
// (InvalidArgument). Retrying would not help, so the worker stops.
type RefusedError struct {
	Code    codes.Code
	Message string // the primary's, which never repeats the credential
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("the primary refused this worker (%s: %s)", e.Code, e.Message)
}

// Run runs a worker with TCP listeners from cfg until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	lis, err := net.Listen("tcp", cfg.ProxyListen)
	if err != nil {
		return fmt.Errorf("sandbox proxy: %w", err)
	}
	var metricsLis net.Listener
	if cfg.MetricsListen != "" {
		if metricsLis, err = net.Listen("tcp", cfg.MetricsListen); err != nil {
			lis.Close()
			return fmt.Errorf("metrics: %w", err)
		}
	}
	w, err := NewWithMetrics(cfg, lis, metricsLis)
	if err != nil {
		lis.Close()
		if metricsLis != nil {
			metricsLis.Close()
		}
		return err
	}
	attrs := append([]any{"worker_id", cfg.ID, "worker_key", cfg.Key, "proxy", w.ProxyURL(), "primary", cfg.PrimaryAddr},
		buildinfo.Read().LogAttrs()...)
	if metricsLis != nil {
		attrs = append(attrs, "metrics", metricsLis.Addr().String())
	}
	cfg.Logger.Info("worker starting", attrs...)
	err = w.Run(ctx)
	cfg.Logger.Info("worker stopped")
	return err
}
