package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/shellhost"
	"github.com/turncli/turncli/internal/telemetry"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/credentials"
	"github.com/turncli/turncli/worker"
)

// The bench worker's key, id and credential.
const (
	workerKey        = "bench"
	workerID         = "bench-1"
	workerCredential = "turncli-bench-worker-credential"
)

// noEnv is the allowlist of variables shells inherit from this process: none, so a shell's
// environment is PATH, PWD and the three Agent CLI variables, and its cost compares with the
// floor's empty environment. (With LANG=C.UTF-8, bash alone spends a few tenths of a millisecond
// more per start loading the locale; that is the shell's cost, not turncli's.)
var noEnv = []string{}

// rig is a primary serving on loopback TCP inside this process, optionally with one worker
// connected to it (also in this process, dialling the primary's gRPC listener over TCP, its
// sandbox proxy on a loopback port): the shape internal/testenv gives tests, without testing.
type rig struct {
	p           *primary.Primary
	runtime     responsev1.ResponseServiceClient
	grpcAddr    string // the primary's gRPC listener
	agentCLIURL string // the primary's loopback Agent CLI origin
	proxyURL    string // the worker's sandbox proxy origin ("" without a worker)
	// workerTracing is the tracing of the workers started next (nil: off).
	workerTracing *telemetry.Telemetry
	// workerIsolation is the isolation of the workers started next (zero: the default, which
	// isolates wherever the host can).
	workerIsolation shellhost.IsolationConfig
	dir             string // the temporary directory holding every state directory
	stops           []func() error
}

// startRig starts a primary (and a worker when withWorker) under a temporary state directory;
// tweaks adjust the primary's configuration.
func startRig(ctx context.Context, cfg Config, withWorker bool, tweaks ...func(*primary.Config)) (_ *rig, err error) {
	dir, err := os.MkdirTemp("", "turncli-bench-")
	if err != nil {
		return nil, err
	}
	r := &rig{dir: dir}
	r.stops = append(r.stops, func() error { return os.RemoveAll(dir) })
	defer func() {
		if err != nil {
			r.stop()
		}
	}()
	var lis [3]net.Listener
	for i := range lis {
		if lis[i], err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return nil, err
		}
	}
	pcfg := primary.Config{
		StateDir:          dir + "/primary",
		Workers:           primary.WorkersConfig{Credentials: credentials.Workers{Configured: map[string]string{workerKey: workerCredential}}},
		EnableTestToolkit: true,
		Shells:            shellhost.Settings{AgentBinary: cfg.AgentBinary, EnvAllow: noEnv, Grace: 500 * time.Millisecond},
		ShutdownGrace:     5 * time.Second,
		Logger:            slog.New(slog.DiscardHandler),
	}
	for _, tweak := range tweaks {
		tweak(&pcfg)
	}
	pctx, cancel := context.WithCancel(ctx)
	p, err := primary.New(pctx, pcfg, primary.Listeners{GRPC: lis[0], HTTP: lis[1], AgentCLI: lis[2]})
	if err != nil {
		cancel()
		for _, l := range lis {
			l.Close()
		}
		return nil, fmt.Errorf("primary.New: %w", err)
	}
	served := make(chan error, 1)
	go func() { served <- p.Serve(pctx) }()
	r.stops = append(r.stops, func() error { cancel(); return <-served })
	r.p, r.grpcAddr, r.agentCLIURL = p, lis[0].Addr().String(), "http://"+lis[2].Addr().String()

	conn, err := grpc.NewClient(r.grpcAddr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			return invoker(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+p.RuntimeToken()), method, req, reply, cc, opts...)
		}),
		grpc.WithStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			return streamer(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+p.RuntimeToken()), desc, cc, method, opts...)
		}),
	)
	if err != nil {
		return nil, err
	}
	r.stops = append(r.stops, conn.Close)
	r.runtime = responsev1.NewResponseServiceClient(conn)

	if withWorker {
		if err := r.startWorker(ctx, cfg, dir+"/worker"); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *rig) startWorker(ctx context.Context, cfg Config, dir string) error {
	return r.startWorkerAs(ctx, cfg, dir, workerKey, workerID, workerCredential)
}

// startWorkerAs starts a worker with key, id and credential (which the primary's configuration
// must hold) and waits until it is connected. The rig's proxyURL is the first worker's.
func (r *rig) startWorkerAs(ctx context.Context, cfg Config, dir, key, id, credential string) error {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	w, err := worker.New(worker.Config{
		PrimaryAddr: r.grpcAddr, Credential: credential, Key: key, ID: id,
		StateDir: dir,
		Shells: shellhost.Settings{AgentBinary: cfg.AgentBinary, EnvAllow: noEnv, Grace: 500 * time.Millisecond,
			Isolation: r.workerIsolation},
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler), Telemetry: r.workerTracing,
	}, lis)
	if err != nil {
		lis.Close()
		return fmt.Errorf("worker.New: %w", err)
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	r.stops = append(r.stops, func() error { cancel(); return <-done })
	if r.proxyURL == "" {
		r.proxyURL = w.ProxyURL()
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, w := range r.p.Internals().Workers.Workers() {
			if w.ID == id {
				return nil
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	return errors.New("the bench worker did not connect to the primary")
}

// stop stops the worker, then the primary, and removes the state, in reverse order of start.
func (r *rig) stop() error {
	var errs []error
	for i := len(r.stops) - 1; i >= 0; i-- {
		errs = append(errs, r.stops[i]())
	}
	r.stops = nil
	return errors.Join(errs...)
}

// shell is what one Bash command of a response gets: where to call, the grant and the window.
type shell struct {
	responseID string
	origin     string
	token      string
	window     string
	// traceparent, when set, is the command's TRACEPARENT (and the REST clients' header).
	traceparent string
}

// env is the command's Agent CLI environment (and its TRACEPARENT when traced), and nothing
// else.
func (s shell) env() []string {
	env := []string{"MINDROOM_AGENT_CLI_URL=" + s.origin, "MINDROOM_AGENT_CLI_TOKEN=" + s.token, "MINDROOM_AGENT_CLI_WINDOW=" + s.window}
	if s.traceparent != "" {
		env = append(env, "TRACEPARENT="+s.traceparent)
	}
	return env
}

// openShell opens a response through the runtime API (on the worker key when key is not empty)
// and a window in it, as a runtime-run shell gets one.
func (r *rig) openShell(ctx context.Context, key string) (shell, error) {
	resp, err := r.runtime.OpenResponse(ctx, &responsev1.OpenResponseRequest{
		AgentName: "bench", RequesterId: "@bench:example.org",
		Conversation: &conversationv1.Conversation{Channel: "!bench:example.org", Thread: "$bench"},
		ShellMode:    responsev1.ShellMode_SHELL_MODE_MINIMAL, WorkerKey: key,
	})
	if err != nil {
		return shell{}, fmt.Errorf("OpenResponse: %w", err)
	}
	w, err := r.runtime.OpenWindow(ctx, &responsev1.OpenWindowRequest{ResponseId: resp.GetResponseId(), BashCallId: "bench"})
	if err != nil {
		return shell{}, fmt.Errorf("OpenWindow: %w", err)
	}
	env := w.GetEnvironment()
	return shell{
		responseID: resp.GetResponseId(), origin: env["MINDROOM_AGENT_CLI_URL"],
		token: env["MINDROOM_AGENT_CLI_TOKEN"], window: env["MINDROOM_AGENT_CLI_WINDOW"],
	}, nil
}

// closeResponse closes a response through the runtime API.
func (r *rig) closeResponse(ctx context.Context, id string) error {
	_, err := r.runtime.CloseResponse(ctx, &responsev1.CloseResponseRequest{ResponseId: id})
	return err
}
