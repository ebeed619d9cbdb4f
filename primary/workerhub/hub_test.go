package workerhub_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/internal/bashexec"
	"github.com/turncli/turncli/internal/faultgrpc"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/workerhub"
)

// serveHub serves a Hub of its own (configured by cfg) over bufconn and returns a fake worker of
// key-a connected to it.
func serveHub(t *testing.T, cfg workerhub.Config) (*workerhub.Hub, *fakeWorker) {
	t.Helper()
	creds := workerhub.NewCredentials()
	creds.Add("key-a", testenv.WorkerCredential("key-a"))
	cfg.Credentials = creds
	hub := workerhub.New(cfg)
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer(faultgrpc.ServerOptions(nil)...)
	workerv1.RegisterWorkerServiceServer(srv, newService(t, hub, newSink()))
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-served
	})
	conn, err := grpc.NewClient("passthrough:///hub",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx, cancel := context.WithTimeout(asWorker(context.Background(), testenv.WorkerCredential("key-a"), "own-hub"), testDeadline)
	t.Cleanup(cancel)
	stream, err := workerv1.NewWorkerServiceClient(conn).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeWorker{t: t, id: "own-hub", stream: stream, cancel: cancel}
	f.send(helloMsg(hello("key-a", "own-hub")))
	if msg, err := stream.Recv(); err != nil || msg.GetWelcome() == nil {
		t.Fatalf("first answer = %v, %v", msg, err)
	}
	return hub, f
}

func TestHubReturnsCreditWhateverTheConfiguredCredit(t *testing.T) {
	for _, credit := range []int{1, 3, 8, 13} {
		t.Run("Credit"+strconv.Itoa(credit), func(t *testing.T) {
			hub, f := serveHub(t, workerhub.Config{OutputCredit: credit})
			ctx := deadline(t)
			var got []string
			done := make(chan runOutcome, 1)
			go func() {
				res, err := hub.Run(ctx, shellCommand("key-a", "seq 100"), func(_ bashexec.Stream, b []byte) { got = append(got, string(b)) })
				done <- runOutcome{res, err}
			}()
			start := f.nextStart()
			if int(start.GetOutputCredit()) != credit {
				t.Fatalf("StartCommand credit = %d, want %d", start.GetOutputCredit(), credit)
			}
			var want []string
			for i := range 5 * credit {
				want = append(want, strconv.Itoa(i))
			}
			f.sendWithinCredit(start, want)
			f.exit(&workerv1.CommandExited{CommandId: start.GetCommandId()})
			r := await(t, ctx, done, "Run")
			if r.err != nil || strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("Run = %+v, %v; delivered %v", r.res, r.err, got)
			}
		})
	}
}

func TestHubProtocolEdges(t *testing.T) {
	t.Run("OutputAndExitOfUnknownCommandsAreIgnored", func(t *testing.T) {
		env := testenv.Start(t)
		f := startFake(t, env, "key-a", "stale")
		f.output("no-such-command", stdout, "late output")
		f.exit(&workerv1.CommandExited{CommandId: "no-such-command", ExitCode: 1})
		id := env.Open(t, onKey("key-a"))
		ctx := deadline(t)
		done := asyncBash(ctx, env, id, "after-stale", "true", nil)
		start := f.nextStart()
		f.output(start.GetCommandId(), stdout, "fresh")
		f.exit(&workerv1.CommandExited{CommandId: start.GetCommandId()})
		if out := await(t, ctx, done, "RunBash"); out.err != nil || out.run.stdout.String() != "fresh" || out.run.result.GetError() != "" {
			t.Fatalf("RunBash = %+v, %v", out.run, out.err)
		}
	})

	t.Run("SecondHelloEndsTheConnection", func(t *testing.T) {
		env := testenv.Start(t)
		f := startFake(t, env, "key-a", "repeating")
		f.send(helloMsg(hello("key-a", "repeating")))
		if st := f.ended(); st.Code() != codes.InvalidArgument {
			t.Fatalf("connection ended with %v, want InvalidArgument", st)
		}
		id := env.Open(t, onAbsentKey("key-a"))
		out, err := runBash(deadline(t), env, id, "nowhere", "true", nil)
		if err != nil || out.result.GetError() != `no worker with key "key-a" is connected` {
			t.Fatalf("RunBash after the connection ended = %+v, %v", out, err)
		}
	})
}
