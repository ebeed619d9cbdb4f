package worker_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/shellhost"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/test/bufconn"

	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/worker"
)

// testDeadline bounds every wait, so a worker that fails to answer ends the test instead of
// hanging it.
const testDeadline = 20 * time.Second

func deadline(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	t.Cleanup(cancel)
	return ctx
}

func await[T any](t testing.TB, ctx context.Context, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-ctx.Done():
		t.Fatalf("%s: %v", what, ctx.Err())
		panic("unreachable")
	}
}

// fakePrimary serves WorkerService over bufconn and hands every Connect stream to the test,
// which then plays the primary's side of the protocol message by message.
type fakePrimary struct {
	workerv1.UnimplementedWorkerServiceServer
	lis      *bufconn.Listener
	sessions chan *session
}

// session is one Connect stream from the worker.
type session struct {
	t      testing.TB
	stream workerv1.WorkerService_ConnectServer
	md     metadata.MD
	end    chan error // the test ends the stream with this status
	ctx    context.Context
}

func startFakePrimary(t testing.TB) *fakePrimary {
	t.Helper()
	fp := &fakePrimary{lis: bufconn.Listen(1 << 20), sessions: make(chan *session, 8)}
	srv := grpc.NewServer()
	workerv1.RegisterWorkerServiceServer(srv, fp)
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(fp.lis)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-served
	})
	return fp
}

func (fp *fakePrimary) Connect(stream workerv1.WorkerService_ConnectServer) error {
	md, _ := metadata.FromIncomingContext(stream.Context())
	s := &session{stream: stream, md: md, end: make(chan error, 1), ctx: stream.Context()}
	select {
	case fp.sessions <- s:
	case <-stream.Context().Done():
		return stream.Context().Err()
	}
	select {
	case err := <-s.end:
		return err
	case <-stream.Context().Done():
		return stream.Context().Err()
	}
}

// accept waits for the worker's next connection and checks that it opens with Hello.
func (fp *fakePrimary) accept(t testing.TB) (*session, *workerv1.Hello) {
	t.Helper()
	s := await(t, deadline(t), fp.sessions, "the worker to connect")
	s.t = t
	msg := s.recv()
	if msg.GetHello() == nil {
		t.Fatalf("first message = %v, want Hello", msg)
	}
	return s, msg.GetHello()
}

// welcome accepts the worker's next connection.
func (fp *fakePrimary) welcome(t testing.TB) *session {
	t.Helper()
	s, _ := fp.accept(t)
	s.send(&workerv1.ConnectResponse{Event: &workerv1.ConnectResponse_Welcome{Welcome: &workerv1.Welcome{SessionId: "s"}}})
	return s
}

// recv returns the worker's next message; the deadline ends a wait for one that never comes.
func (s *session) recv() *workerv1.ConnectRequest {
	s.t.Helper()
	type result struct {
		msg *workerv1.ConnectRequest
		err error
	}
	ch := make(chan result, 1)
	go func() {
		msg, err := s.stream.Recv()
		ch <- result{msg, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			s.t.Fatalf("Recv: %v", r.err)
		}
		return r.msg
	case <-time.After(testDeadline):
		s.t.Fatalf("no message from the worker within %v", testDeadline)
		panic("unreachable")
	}
}

func (s *session) send(msg *workerv1.ConnectResponse) {
	s.t.Helper()
	if err := s.stream.Send(msg); err != nil {
		s.t.Fatalf("Send: %v", err)
	}
}

func (s *session) start(start *workerv1.StartCommand) {
	s.t.Helper()
	if start.OutputCredit == 0 {
		start.OutputCredit = 32
	}
	s.send(&workerv1.ConnectResponse{Event: &workerv1.ConnectResponse_Start{Start: start}})
}

func (s *session) cancel(id string) {
	s.t.Helper()
	s.send(&workerv1.ConnectResponse{Event: &workerv1.ConnectResponse_Cancel{Cancel: &workerv1.CancelCommand{CommandId: id}}})
}

func (s *session) credit(id string, n uint32) {
	s.t.Helper()
	s.send(&workerv1.ConnectResponse{Event: &workerv1.ConnectResponse_Credit{Credit: &workerv1.Credit{CommandId: id, Chunks: n}}})
}

// finished is a command's output and exit as the primary saw them.
type finished struct {
	stdout, stderr string
	exited         *workerv1.CommandExited
}

// collect reads the messages of command id until its exit, returning credit for every chunk.
func (s *session) collect(id string) finished {
	s.t.Helper()
	var out, errOut strings.Builder
	for {
		msg := s.recv()
		if o := msg.GetOutput(); o != nil {
			if o.GetCommandId() != id {
				s.t.Fatalf("output of %q while collecting %q", o.GetCommandId(), id)
			}
			if o.GetStream() == workerv1.OutputStream_OUTPUT_STREAM_STDERR {
				errOut.Write(o.GetData())
			} else {
				out.Write(o.GetData())
			}
			s.credit(id, 1)
			continue
		}
		if ex := msg.GetExited(); ex != nil {
			if ex.GetCommandId() != id {
				s.t.Fatalf("exit of %q while collecting %q", ex.GetCommandId(), id)
			}
			return finished{out.String(), errOut.String(), ex}
		}
		s.t.Fatalf("unexpected message %v", msg)
	}
}

// waitFor reads command id's output until it contains marker, returning credit as it goes.
func (s *session) waitFor(id, marker string) {
	s.t.Helper()
	var seen strings.Builder
	for !strings.Contains(seen.String(), marker) {
		msg := s.recv()
		o := msg.GetOutput()
		if o == nil || o.GetCommandId() != id {
			s.t.Fatalf("waiting for %q from %s, got %v", marker, id, msg)
		}
		seen.Write(o.GetData())
		s.credit(id, 1)
	}
}

// liveWorker is a real worker running against a fake primary.
type liveWorker struct {
	*worker.Worker
	stateDir string
	stop     func() // ends Run and waits for it; idempotent, also run at cleanup
	// exited is what Run returned when it has returned on its own (it then fails stop's
	// check unless the test took it from here first).
	exited chan error
}

// runWorker runs a real worker against fp until the test ends. Its logs go to t.Log.
func runWorker(t testing.TB, fp *fakePrimary, edit ...func(*worker.Config)) *liveWorker {
	t.Helper()
	cfg := worker.Config{
		PrimaryAddr: "passthrough:///fake-primary",
		Credential:  testenv.WorkerCredential("key-a"),
		Key:         "key-a",
		ID:          "worker-under-test",
		Capacity:    4,
		StateDir:    t.TempDir(),
		// Its shells trade files with the test through temporary directories; isolation is
		// tested by internal/sandbox and primary/e2e.
		Shells: shellhost.Settings{
			AgentBinary: "/bin/true",
			Isolation:   shellhost.IsolationConfig{Mode: shellhost.IsolationOff},
			EnvAllow:    []string{"HOME", "LANG"},
			Grace:       200 * time.Millisecond,
		},
		MinBackoff: time.Millisecond,
		MaxBackoff: 20 * time.Millisecond,
		Logger:     slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	for _, e := range edit {
		e(&cfg)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w, err := worker.New(cfg, lis, grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
		return fp.lis.DialContext(ctx)
	}))
	if err != nil {
		lis.Close()
		t.Fatalf("worker.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	lw := &liveWorker{Worker: w, stateDir: cfg.StateDir, exited: make(chan error, 1)}
	returned := make(chan struct{})
	go func() { lw.exited <- w.Run(ctx); close(returned) }()
	lw.stop = sync.OnceFunc(func() {
		cancel()
		<-returned
		select {
		case err := <-lw.exited:
			if err != nil {
				t.Errorf("worker.Run: %v", err)
			}
		default: // taken by the test
		}
	})
	t.Cleanup(lw.stop)
	return lw
}

type testLog struct{ t testing.TB }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// holder tells when the last process holding a FIFO open for writing has gone: a command runs
// `sleep 1000 >"$FIFO" &` and the FIFO's end of file is that process's death. No polling.
type holder struct {
	path   string
	opened chan struct{}
	gone   chan struct{}
}

func newHolder(t testing.TB) *holder {
	t.Helper()
	h := &holder{path: filepath.Join(t.TempDir(), "holder.fifo"), opened: make(chan struct{}), gone: make(chan struct{})}
	if err := syscall.Mkfifo(h.path, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	var once sync.Once
	go func() {
		defer close(h.gone)
		f, err := os.Open(h.path) // blocks until a writer opens it
		once.Do(func() { close(h.opened) })
		if err != nil {
			return
		}
		defer f.Close()
		_, _ = io.Copy(io.Discard, f)
	}()
	t.Cleanup(func() {
		if f, err := os.OpenFile(h.path, os.O_RDWR, 0); err == nil {
			f.Close()
		}
	})
	return h
}
