package testenv

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/shellhost"

	"google.golang.org/grpc"

	"github.com/turncli/turncli/internal/shellpriv/shellprivtest"
	"github.com/turncli/turncli/worker"
)

// WorkerCredential is the credential testenv configures for a worker key ("key-a", "key-b").
func WorkerCredential(key string) string { return "test-worker-credential-for-" + key }

// Worker is a worker started in the test process.
type Worker struct {
	*worker.Worker
	ID       string
	StateDir string
	stop     context.CancelFunc
	done     chan error
	once     sync.Once
	err      error
}

// Stop ends the worker's connection and waits for it to stop (as if the process exited). It
// returns what the worker's Run returned; calling it again returns the same.
func (w *Worker) Stop() error {
	w.stop()
	w.once.Do(func() { w.err = <-w.done })
	return w.err
}

// StartWorker starts a worker with key and id connected to the primary over bufconn, with its
// sandbox proxy on a loopback port; it stops at cleanup. edit may change its configuration.
func (e *Env) StartWorker(t testing.TB, key, id string, edit ...func(*worker.Config)) *Worker {
	t.Helper()
	stateDir := t.TempDir()
	shellprivtest.Reachable(t, stateDir) // shells run as the shell user and enter their workspace
	cfg := worker.Config{
		PrimaryAddr: "passthrough:///primary",
		Credential:  WorkerCredential(key),
		Key:         key,
		ID:          id,
		StateDir:    stateDir,
		Shells: shellhost.Settings{
			AgentBinary: e.AgentBinary,
			Isolation:   shellhost.IsolationConfig{Mode: shellhost.IsolationOff}, // as the primary's (see Start)
			EnvAllow:    []string{"HOME", "LANG"},
			Grace:       500 * time.Millisecond,
		},
		MinBackoff: 10 * time.Millisecond,
		MaxBackoff: 200 * time.Millisecond,
		Logger:     slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	for _, f := range edit {
		f(&cfg)
	}
	w, err := worker.New(cfg, listenLoopback(t), grpc.WithContextDialer(e.DialPrimary))
	if err != nil {
		t.Fatalf("worker.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tw := &Worker{Worker: w, ID: id, StateDir: cfg.StateDir, stop: cancel, done: make(chan error, 1)}
	go func() { tw.done <- w.Run(ctx) }()
	t.Cleanup(func() {
		if err := tw.Stop(); err != nil {
			t.Errorf("worker %s: %v", id, err)
		}
	})
	e.WaitForWorker(t, id)
	return tw
}

// WaitForWorker blocks until the primary has a connection from worker id (at most 10 s).
func (e *Env) WaitForWorker(t testing.TB, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.Primary.Internals().Workers.WaitConnected(ctx, id); err != nil {
		t.Fatalf("worker %s did not connect: %v", id, err)
	}
}
