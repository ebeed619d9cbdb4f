// Package testenv starts a real primary inside a test: gRPC over bufconn for the runtime API,
// a real loopback listener for the Agent CLI (real Bash commands and real clients reach it),
// the real local shells and the built mindroom-agent binary, with cleanup registered on the test.
//
// It is test support only; nothing in production imports it.
package testenv

import (
	"context"
	"fmt"
	"github.com/turncli/turncli/internal/shellhost"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/test/bufconn"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/shellpriv"
	"github.com/turncli/turncli/internal/shellpriv/shellprivtest"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/credentials"
)

// Env is a running primary and clients for it.
type Env struct {
	Primary *primary.Primary
	// Runtime is a ResponseService client authenticated with the runtime credential.
	Runtime responsev1.ResponseServiceClient
	// Conn is the runtime's gRPC connection (bufconn).
	Conn *grpc.ClientConn
	// AgentCLIURL is the loopback Agent CLI origin, e.g. http://127.0.0.1:40123.
	AgentCLIURL string
	// HTTPURL is the REST API origin (loopback).
	HTTPURL string
	// MetricsURL is the origin of /metrics, /healthz and /readyz (loopback).
	MetricsURL string
	// StateDir is the primary's state directory.
	StateDir string
	// AgentBinary is the mindroom-agent executable local shells run.
	AgentBinary string
	// GRPCAddr is the gRPC listener's loopback address with WithGRPCOnLoopback; empty on
	// bufconn.
	GRPCAddr string
	// DialPrimary connects to the primary's gRPC listener, as a worker would.
	DialPrimary func(ctx context.Context, addr string) (net.Conn, error)
	// Shutdown begins the primary's shutdown, as its signal would; cleanup waits for its end.
	Shutdown func()
}

// Option adjusts the primary's configuration or how the test reaches it.
type Option func(*settings)

type settings struct {
	cfg *primary.Config
	// tcpGRPC serves gRPC on a loopback port instead of bufconn.
	tcpGRPC bool
}

// WithConfig lets a test change any configuration field.
func WithConfig(f func(*primary.Config)) Option { return func(s *settings) { f(s.cfg) } }

// WithIsolation runs the primary's shells in sandboxes, as a primary does by default.
func WithIsolation() Option {
	return func(s *settings) { s.cfg.Shells.Isolation.Mode = shellhost.IsolationRequired }
}

// WithGRPCOnLoopback serves the gRPC APIs on a loopback TCP port (Env.GRPCAddr), for a test
// of a program that dials an address, as a separate process would.
func WithGRPCOnLoopback() Option { return func(s *settings) { s.tcpGRPC = true } }

// Start builds and serves a primary with the test toolkits enabled; it stops at test cleanup.
func Start(t testing.TB, opts ...Option) *Env {
	t.Helper()
	stateDir := t.TempDir()
	shellprivtest.Reachable(t, stateDir) // shells run as the shell user and enter their workspace
	cfg := primary.Config{
		Workers: primary.WorkersConfig{Credentials: credentials.Workers{
			Configured: map[string]string{"key-a": WorkerCredential("key-a"), "key-b": WorkerCredential("key-b")},
		}},
		StateDir:          stateDir,
		EnableTestToolkit: true,
		Shells: shellhost.Settings{
			AgentBinary: AgentBinary(t),
			// Shells here trade files with the test through its temporary directories, which a
			// sandbox's private /tmp would hide; WithIsolation turns sandboxes on.
			Isolation: shellhost.IsolationConfig{Mode: shellhost.IsolationOff},
			EnvAllow:  []string{"HOME", "LANG"},
			Grace:     500 * time.Millisecond,
		},
		ShutdownGrace: 5 * time.Second,
		Logger:        slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	set := settings{cfg: &cfg}
	for _, o := range opts {
		o(&set)
	}
	var grpcLis net.Listener = bufconn.Listen(1 << 20)
	dialGRPC := func(ctx context.Context, _ string) (net.Conn, error) {
		return grpcLis.(*bufconn.Listener).DialContext(ctx)
	}
	grpcAddr := ""
	if set.tcpGRPC {
		grpcLis = listenLoopback(t)
		grpcAddr = grpcLis.Addr().String()
		dialGRPC = func(ctx context.Context, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "tcp", grpcAddr)
		}
	}
	httpLis := listenLoopback(t)
	cliLis := listenLoopback(t)
	metricsLis := listenLoopback(t)
	ctx, cancel := context.WithCancel(context.Background())
	p, err := primary.New(ctx, cfg, primary.Listeners{GRPC: grpcLis, HTTP: httpLis, AgentCLI: cliLis, Metrics: metricsLis})
	if err != nil {
		cancel()
		t.Fatalf("primary.New: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx) }()

	conn, err := grpc.NewClient("passthrough:///primary",
		grpc.WithContextDialer(dialGRPC),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(bearer(p.RuntimeToken())),
		grpc.WithStreamInterceptor(bearerStream(p.RuntimeToken())),
	)
	if err != nil {
		cancel()
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() {
		conn.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("primary.Serve: %v", err)
		}
	})
	return &Env{
		Primary: p, Runtime: responsev1.NewResponseServiceClient(conn), Conn: conn,
		AgentCLIURL: "http://" + cliLis.Addr().String(), HTTPURL: "http://" + httpLis.Addr().String(),
		MetricsURL: "http://" + metricsLis.Addr().String(),
		StateDir:   cfg.StateDir, AgentBinary: cfg.Shells.AgentBinary,
		GRPCAddr:    grpcAddr,
		DialPrimary: dialGRPC,
		Shutdown:    cancel,
	}
}

func listenLoopback(t testing.TB) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	return l
}

func bearer(token string) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		return invoker(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token), method, req, reply, cc, opts...)
	}
}

func bearerStream(token string) grpc.StreamClientInterceptor {
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		return streamer(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token), desc, cc, method, opts...)
	}
}

// testWriter routes logs to t.Log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// AgentBinary builds cmd/mindroom-agent once per test process and returns its path.
func AgentBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "turncli-testbin-")
		if buildErr != nil {
			return
		}
		// The launcher runs it as the shell user.
		if buildErr = os.Chmod(buildDir, 0o755); buildErr != nil {
			return
		}
		out := filepath.Join(buildDir, "mindroom-agent")
		cmd := exec.Command("go", "build", "-o", out, "github.com/turncli/turncli/cmd/mindroom-agent")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build mindroom-agent: %v\n%s", err, msg)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(buildDir, "mindroom-agent")
}

// Main runs a package's tests, removes what AgentBinary built, and fails if any goroutine
// outlived the tests. Use it as TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreAnyFunction(shellpriv.SpawnerFunction)); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
