package workerhub_test

import (
	"bytes"
	"context"
	"errors"
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
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/internal/workermeta"
	"github.com/turncli/turncli/worker"
)

// testDeadline bounds every wait of a test: a protocol that fails to answer ends the test
// instead of hanging it.
const testDeadline = 20 * time.Second

// dialPrimary connects to the primary's gRPC listener with no credentials of its own.
func dialPrimary(t testing.TB, env *testenv.Env) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///primary",
		grpc.WithContextDialer(env.DialPrimary),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// asWorker adds a worker's credential and id to ctx's outgoing metadata; empty values are left out.
func asWorker(ctx context.Context, credential, id string) context.Context {
	var kv []string
	if credential != "" {
		kv = append(kv, workermeta.CredentialKey, credential)
	}
	if id != "" {
		kv = append(kv, workermeta.IDKey, id)
	}
	return metadata.AppendToOutgoingContext(ctx, kv...)
}

// fakeWorker speaks the Connect protocol directly, so a test controls every message.
type fakeWorker struct {
	t      testing.TB
	id     string
	stream workerv1.WorkerService_ConnectClient
	cancel context.CancelFunc
}

// hello is a valid Hello for a worker of key with id.
func hello(key, id string) *workerv1.Hello {
	return &workerv1.Hello{WorkerId: id, WorkerKey: key, AgentCliUrl: "http://127.0.0.1:9"}
}

// connect opens Connect with credential and id in the metadata and sends first (when not nil).
// It returns the fake and the primary's first answer.
func connect(t testing.TB, env *testenv.Env, credential, id string, first *workerv1.ConnectRequest) (*fakeWorker, *workerv1.ConnectResponse, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(asWorker(context.Background(), credential, id), testDeadline)
	t.Cleanup(cancel)
	stream, err := workerv1.NewWorkerServiceClient(dialPrimary(t, env)).Connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	f := &fakeWorker{t: t, id: id, stream: stream, cancel: cancel}
	if first != nil {
		_ = stream.Send(first) // a refused stream reports why on Recv
	}
	msg, err := stream.Recv()
	return f, msg, err
}

// startFake connects a welcomed fake worker of key with id (capacity 0).
func startFake(t testing.TB, env *testenv.Env, key, id string, edit ...func(*workerv1.Hello)) *fakeWorker {
	t.Helper()
	h := hello(key, id)
	for _, e := range edit {
		e(h)
	}
	f, msg, err := connect(t, env, testenv.WorkerCredential(key), id,
		&workerv1.ConnectRequest{Event: &workerv1.ConnectRequest_Hello{Hello: h}})
	if err != nil {
		t.Fatalf("fake worker %s: %v", id, err)
	}
	if msg.GetWelcome().GetSessionId() == "" {
		t.Fatalf("fake worker %s: first message %v, want Welcome", id, msg)
	}
	return f
}

// next returns the primary's next message that is not Credit.
func (f *fakeWorker) next() *workerv1.ConnectResponse {
	f.t.Helper()
	for {
		msg, err := f.stream.Recv()
		if err != nil {
			f.t.Fatalf("fake worker %s: Recv: %v", f.id, err)
		}
		if msg.GetCredit() == nil {
			return msg
		}
	}
}

// nextStart returns the next StartCommand. A ping the primary sends first (a fast liveness
// interval on a loaded machine) is passed over unanswered, as a busy worker might.
func (f *fakeWorker) nextStart() *workerv1.StartCommand {
	f.t.Helper()
	msg := f.next()
	for msg.GetPing() != nil {
		msg = f.next()
	}
	if msg.GetStart() == nil {
		f.t.Fatalf("fake worker %s: got %v, want StartCommand", f.id, msg)
	}
	return msg.GetStart()
}

// ended waits for the primary to end the stream and returns its status.
func (f *fakeWorker) ended() *status.Status {
	f.t.Helper()
	for {
		_, err := f.stream.Recv()
		if err != nil {
			return status.Convert(err)
		}
	}
}

func (f *fakeWorker) send(msg *workerv1.ConnectRequest) {
	f.t.Helper()
	if err := f.stream.Send(msg); err != nil {
		f.t.Fatalf("fake worker %s: Send: %v", f.id, err)
	}
}

func (f *fakeWorker) output(id string, s workerv1.OutputStream, data string) {
	f.t.Helper()
	f.send(&workerv1.ConnectRequest{Event: &workerv1.ConnectRequest_Output{Output: &workerv1.CommandOutput{
		CommandId: id, Stream: s, Data: []byte(data)}}})
}

func (f *fakeWorker) exit(ex *workerv1.CommandExited) {
	f.t.Helper()
	f.send(&workerv1.ConnectRequest{Event: &workerv1.ConnectRequest_Exited{Exited: ex}})
}

// hangUp ends the fake's connection as a crashed worker would.
func (f *fakeWorker) hangUp() { f.cancel() }

// bashRun is a finished RunBash.
type bashRun struct {
	stdout, stderr bytes.Buffer
	result         *responsev1.BashResult
}

// runBash runs command in response id and collects its output and result. onOutput, when set,
// sees each chunk as it arrives.
func runBash(ctx context.Context, env *testenv.Env, id, bashCallID, command string, onOutput func(*responsev1.OutputChunk)) (*bashRun, error) {
	stream, err := env.Runtime.RunBash(ctx, &responsev1.RunBashRequest{ResponseId: id, BashCallId: bashCallID, Command: command})
	if err != nil {
		return nil, err
	}
	run := &bashRun{}
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			if run.result == nil {
				return nil, errors.New("RunBash ended without a result")
			}
			return run, nil
		}
		if err != nil {
			return nil, err
		}
		if out := msg.GetOutput(); out != nil {
			if onOutput != nil {
				onOutput(out)
			}
			if out.GetStream() == responsev1.OutputStream_OUTPUT_STREAM_STDERR {
				run.stderr.Write(out.GetData())
			} else {
				run.stdout.Write(out.GetData())
			}
		}
		if r := msg.GetResult(); r != nil {
			run.result = r
		}
	}
}

// asyncBash runs runBash in the background; its result arrives on the returned channel.
func asyncBash(ctx context.Context, env *testenv.Env, id, bashCallID, command string, onOutput func(*responsev1.OutputChunk)) <-chan bashOutcome {
	ch := make(chan bashOutcome, 1)
	go func() {
		run, err := runBash(ctx, env, id, bashCallID, command, onOutput)
		ch <- bashOutcome{run, err}
	}()
	return ch
}

type bashOutcome struct {
	run *bashRun
	err error
}

// await waits for ch or the deadline.
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

// deadline returns a context that ends after testDeadline (or with the test).
func deadline(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	t.Cleanup(cancel)
	return ctx
}

// holder tells when the last process holding a FIFO open for writing has gone: a command runs
// `sleep 1000 >"$FIFO" &` and the FIFO's end of file is that process's death. No polling.
type holder struct {
	path   string
	opened chan struct{} // a writer has opened the FIFO
	gone   chan struct{} // every writer has closed it
}

func newHolder(t testing.TB) *holder {
	t.Helper()
	h := &holder{path: filepath.Join(t.TempDir(), "holder.fifo"), opened: make(chan struct{}), gone: make(chan struct{})}
	if err := syscall.Mkfifo(h.path, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	go func() {
		defer close(h.gone)
		f, err := os.Open(h.path) // blocks until a writer opens it
		close(h.opened)
		if err != nil {
			return
		}
		defer f.Close()
		_, _ = io.Copy(io.Discard, f)
	}()
	t.Cleanup(func() {
		// Open the write side ourselves so a reader still blocked in open returns, then close it.
		if f, err := os.OpenFile(h.path, os.O_RDWR, 0); err == nil {
			f.Close()
		}
	})
	return h
}

// liveWorker is a real worker running in the test process. Unlike testenv.StartWorker it can be
// stopped in the middle of a test (Stop is idempotent and also runs at cleanup).
type liveWorker struct {
	*worker.Worker
	id        string
	connected chan struct{} // one value per Welcome, from the worker's own log
	stop      func()
}

func (w *liveWorker) Stop() { w.stop() }

// startWorker starts a worker with key and id against env's primary and returns once the primary
// has welcomed it.
func startWorker(t testing.TB, env *testenv.Env, key, id string, edit ...func(*worker.Config)) *liveWorker {
	t.Helper()
	connected := make(chan struct{}, 64)
	cfg := worker.Config{
		PrimaryAddr: "passthrough:///primary",
		Credential:  testenv.WorkerCredential(key),
		Key:         key,
		ID:          id,
		StateDir:    t.TempDir(),
		// Its shells trade files with the test through temporary directories; isolation is
		// tested by internal/sandbox and primary/e2e.
		Shells: shellhost.Settings{
			AgentBinary: env.AgentBinary,
			Isolation:   shellhost.IsolationConfig{Mode: shellhost.IsolationOff},
			EnvAllow:    []string{"HOME", "LANG"},
			Grace:       500 * time.Millisecond,
		},
		MinBackoff: 10 * time.Millisecond,
		MaxBackoff: 200 * time.Millisecond,
		Logger:     slog.New(&watchHandler{t: t, connected: connected}),
	}
	for _, e := range edit {
		e(&cfg)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w, err := worker.New(cfg, lis, grpc.WithContextDialer(env.DialPrimary))
	if err != nil {
		lis.Close()
		t.Fatalf("worker.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	lw := &liveWorker{Worker: w, id: id, connected: connected}
	lw.stop = sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker %s: %v", id, err)
		}
	})
	t.Cleanup(lw.stop)
	await(t, deadline(t), connected, "worker "+id+" welcomed")
	return lw
}

// watchHandler routes a worker's warnings to t.Log and reports each Welcome it logs.
type watchHandler struct {
	t         testing.TB
	connected chan<- struct{}
	attrs     []slog.Attr
}

func (h *watchHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *watchHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "connected to primary" {
		select {
		case h.connected <- struct{}{}:
		default:
		}
	}
	if r.Level >= slog.LevelWarn {
		var b strings.Builder
		b.WriteString(r.Level.String() + " " + r.Message)
		r.Attrs(func(a slog.Attr) bool { b.WriteString(" " + a.String()); return true })
		h.t.Log(b.String())
	}
	return nil
}

func (h *watchHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &watchHandler{t: h.t, connected: h.connected, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h *watchHandler) WithGroup(string) slog.Handler { return h }
