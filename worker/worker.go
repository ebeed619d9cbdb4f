package worker

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/internal/backoff"
	"github.com/turncli/turncli/internal/shellhost"
	"github.com/turncli/turncli/sandboxproxy"
	"github.com/turncli/turncli/worker/jobs"
)

// Worker is an assembled worker, ready to Run.
type Worker struct {
	cfg      Config
	proxyLis net.Listener
	shells   *shellhost.Runner
	conn     *grpc.ClientConn
	client   workerv1.WorkerServiceClient
	jobs     *jobs.Manager // set by Run
}

// New builds a worker whose sandbox proxy serves on proxyLis. extra dial options are for tests
// (a bufconn dialer).
func New(cfg Config, proxyLis net.Listener, extra ...grpc.DialOption) (*Worker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
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
	}, extra...)
	conn, err := grpc.NewClient(cfg.PrimaryAddr, opts...)
	if err != nil {
		return nil, err
	}
	proxyURL := "http://" + proxyLis.Addr().String()
	shells, err := shellhost.New(shellhost.Config{
		StateDir: cfg.StateDir, AgentCLIURL: proxyURL, AgentBinary: cfg.AgentBinary, AgentArgs: cfg.AgentArgs,
		EnvAllow: cfg.EnvAllow, DefaultTimeout: cfg.ShellDefaultTimeout, MaxTimeout: cfg.ShellMaxTimeout,
		Grace: cfg.ShellGrace,
	})
	if err != nil {
		conn.Close()
		return nil, err
	}
	return &Worker{cfg: cfg, proxyLis: proxyLis, shells: shells, conn: conn, client: workerv1.NewWorkerServiceClient(conn)}, nil
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
	wg.Go(func() { proxyErr <- sandboxproxy.Serve(ctx, w.proxyLis, w.conn) })
	refused := w.connectLoop(ctx)
	stop()
	wg.Wait()
	if refused != nil {
		return refused
	}
	return <-proxyErr
}

// connectLoop keeps one session with the primary, reconnecting with jittered exponential
// backoff, until ctx ends (nil) or the primary refuses this worker (a *RefusedError).
func (w *Worker) connectLoop(ctx context.Context) error {
	p := backoff.Policy{Min: w.cfg.MinBackoff, Max: w.cfg.MaxBackoff}
	err := p.Loop(ctx, w.session, refusal, func(err error, wait time.Duration) {
		w.cfg.Logger.Warn("connection to primary ended", "err", err, "retry_in", wait)
	})
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
	w, err := New(cfg, lis)
	if err != nil {
		lis.Close()
		return err
	}
	cfg.Logger.Info("worker starting", "worker_id", cfg.ID, "worker_key", cfg.Key, "proxy", w.ProxyURL(), "primary", cfg.PrimaryAddr)
	return w.Run(ctx)
}
