package hostkit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/turncli/turncli/client"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/hostkit"
	"github.com/turncli/turncli/internal/testenv"
)

// patience bounds every wait of a test; reaching it is a failure, never a way to synchronise.
const patience = 20 * time.Second

// runningHost is a hostkit.Host running against the test primary.
type runningHost struct {
	t          testing.TB
	registered chan string // the session id of every completed registration
	cancel     context.CancelFunc
	done       chan error
	stopOnce   sync.Once
	err        error
}

// runHost starts a host serving toolkits on the test primary; edit may change its configuration.
// It stops at cleanup.
func runHost(t testing.TB, env *testenv.Env, edit func(*hostkit.Config), toolkits ...hostkit.Toolkit) *runningHost {
	t.Helper()
	r := &runningHost{t: t, registered: make(chan string, 16), done: make(chan error, 1)}
	cfg := hostkit.Config{
		Address:     "passthrough:///primary",
		Token:       env.Primary.RuntimeToken(),
		HostID:      t.Name(),
		DialOptions: []grpc.DialOption{grpc.WithContextDialer(env.DialPrimary)},
		MinBackoff:  10 * time.Millisecond,
		MaxBackoff:  100 * time.Millisecond,
		OnRegistered: func(session string) {
			select {
			case r.registered <- session:
			default:
			}
		},
		Logger: slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if edit != nil {
		edit(&cfg)
	}
	h, err := hostkit.New(cfg, toolkits...)
	if err != nil {
		t.Fatalf("hostkit.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- h.Run(ctx) }()
	t.Cleanup(func() { r.stop() })
	return r
}

// waitRegistered waits for the host's next completed registration and returns its session.
func (r *runningHost) waitRegistered() string {
	r.t.Helper()
	select {
	case s := <-r.registered:
		return s
	case err := <-r.done:
		r.t.Fatalf("host stopped before registering: %v", err)
	case <-time.After(patience):
		r.t.Fatalf("host did not register")
	}
	return ""
}

// stop ends Run's context and returns what Run returned.
func (r *runningHost) stop() error {
	r.stopOnce.Do(func() {
		r.cancel()
		r.err = <-r.done
	})
	return r.err
}

// exited waits for Run to return by itself.
func (r *runningHost) exited() error {
	r.t.Helper()
	select {
	case err := <-r.done:
		r.stopOnce.Do(func() { r.cancel(); r.err = err })
		return err
	case <-time.After(patience):
		r.t.Fatalf("Run did not return")
	}
	return nil
}

type testLog struct{ t testing.TB }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// shell is a window of a response, driving mindroom-agent in process.
type shell struct {
	t   testing.TB
	env map[string]string
}

func openShell(t testing.TB, env *testenv.Env, responseID string) *shell {
	t.Helper()
	w, err := env.Runtime.OpenWindow(context.Background(), &responsev1.OpenWindowRequest{ResponseId: responseID, BashCallId: "bash-1"})
	if err != nil {
		t.Fatalf("OpenWindow: %v", err)
	}
	return &shell{t: t, env: w.GetEnvironment()}
}

func (s *shell) cli(args ...string) (int, map[string]any) {
	s.t.Helper()
	var stdout, stderr bytes.Buffer
	code := client.Main(context.Background(), args, strings.NewReader(""), &stdout, &stderr, func(k string) string { return s.env[k] })
	var out map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		s.t.Fatalf("mindroom-agent %v: stdout %q (stderr %q): %v", args, stdout.String(), stderr.String(), err)
	}
	return code, out
}

// call makes a call and waits until it settles.
func (s *shell) call(tool, args string) map[string]any {
	s.t.Helper()
	_, r := s.cli("tools", "call", tool, args, "--timeout", "20")
	return r
}

// submit makes a call and returns its id without waiting for it.
func (s *shell) submit(tool, args string) string {
	s.t.Helper()
	_, r := s.cli("tools", "call", tool, args, "--timeout", "0")
	id, _ := r["call_id"].(string)
	if id == "" {
		s.t.Fatalf("submit %s: %v", tool, r)
	}
	return id
}

func (s *shell) wait(callID string) map[string]any {
	s.t.Helper()
	_, r := s.cli("calls", "wait", callID, "--timeout", "20")
	return r
}

func (s *shell) get(callID string) map[string]any {
	s.t.Helper()
	_, r := s.cli("calls", "get", callID)
	return r
}

func canon(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func expectReceipt(t testing.TB, r map[string]any, status, outcome string) {
	t.Helper()
	if r["status"] != status || canon(t, r["outcome"]) != outcome {
		t.Fatalf("receipt = %v, want status %s outcome %s", r, status, outcome)
	}
}

// receive waits for a value a tool function sends.
func receive[T any](t testing.TB, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(patience):
		t.Fatalf("the tool function did not get there")
	}
	var zero T
	return zero
}
