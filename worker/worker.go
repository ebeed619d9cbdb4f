package worker

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"

	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
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
	defer jm.Close() // the jobs run on; the next worker on this state dir takes them over
	var wg sync.WaitGroup
	proxyErr := make(chan error, 1)
	wg.Go(func() { proxyErr <- sandboxproxy.Serve(ctx, w.proxyLis, w.conn) })
	w.connectLoop(ctx)
	wg.Wait()
	return <-proxyErr
}

// connectLoop keeps one session with the primary, reconnecting with jittered exponential
// backoff, until ctx ends.
func (w *Worker) connectLoop(ctx context.Context) {
	log := w.cfg.Logger
	backoff := w.cfg.MinBackoff
	for ctx.Err() == nil {
		welcomed, err := w.session(ctx)
		if ctx.Err() != nil {
			return
		}
		log.Warn("connection to primary ended", "err", err, "retry_in", backoff)
		if welcomed {
			backoff = w.cfg.MinBackoff
		}
		wait := backoff/2 + rand.N(backoff/2+1)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		backoff = min(backoff*2, w.cfg.MaxBackoff)
	}
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
