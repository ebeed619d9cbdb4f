package workerhub_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/test/bufconn"

	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/internal/faultgrpc"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/workerhub"
)

// startHub serves a Hub alone over bufconn, with testenv's worker credentials and sink. The
// returned Env has only DialPrimary, so the fake and real worker helpers reach it.
func startHub(t testing.TB, sink jobs.WorkerSink) (*workerhub.Hub, *testenv.Env) {
	t.Helper()
	creds := workerhub.NewCredentials()
	for _, key := range []string{"key-a", "key-b"} {
		creds.Add(key, testenv.WorkerCredential(key))
	}
	hub := workerhub.New(workerhub.Config{Credentials: creds})
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer(faultgrpc.ServerOptions(nil)...)
	workerv1.RegisterWorkerServiceServer(srv, newService(t, hub, sink))
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(func() {
		hub.Close()
		srv.Stop()
		<-served
	})
	return hub, &testenv.Env{DialPrimary: func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }}
}

// newService is the WorkerService over hub, its job reports going to sink.
func newService(t testing.TB, hub *workerhub.Hub, sink jobs.WorkerSink) *workerhub.Service {
	t.Helper()
	svc, err := workerhub.NewService(workerhub.ServiceConfig{Hub: hub, Jobs: sink, Grants: noGrants{}})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// noGrants knows no grant.
type noGrants struct{}

func (noGrants) Authenticate(string, response.Path) (*response.Response, bool) { return nil, false }

// sinkCall is one call a jobs.WorkerSink received.
type sinkCall struct {
	kind        string // WorkerJobs, JobStarted, JobOutput, JobFinished, or a test's marker
	key, worker string
	job, offset int64
	data        string
	exit        jobs.WorkerJobExit
	jobs        []jobs.WorkerJobState
	// ctx is the context the call was made under.
	ctx context.Context
}

// recordingSink hands every call to the test, in order. hold, when set, runs inside the call
// (after it is recorded), so a test can keep the sink busy.
type recordingSink struct {
	calls chan sinkCall
	hold  func(sinkCall)
}

func newSink() *recordingSink { return &recordingSink{calls: make(chan sinkCall, 4096)} }

func (s *recordingSink) record(c sinkCall) {
	s.calls <- c
	if s.hold != nil {
		s.hold(c)
	}
}

func (s *recordingSink) WorkerJobs(ctx context.Context, key, worker string, jobs []jobs.WorkerJobState) {
	s.record(sinkCall{ctx: ctx, kind: "WorkerJobs", key: key, worker: worker, jobs: jobs})
}

func (s *recordingSink) JobStarted(ctx context.Context, worker string, job int64) {
	s.record(sinkCall{ctx: ctx, kind: "JobStarted", worker: worker, job: job})
}

func (s *recordingSink) JobOutput(ctx context.Context, worker string, job, offset int64, data []byte) {
	s.record(sinkCall{ctx: ctx, kind: "JobOutput", worker: worker, job: job, offset: offset, data: string(data)})
}

func (s *recordingSink) JobFinished(ctx context.Context, worker string, job int64, exit jobs.WorkerJobExit) {
	s.record(sinkCall{ctx: ctx, kind: "JobFinished", worker: worker, job: job, exit: exit})
}

// next returns the sink's next call.
func (s *recordingSink) next(t testing.TB) sinkCall {
	t.Helper()
	select {
	case c := <-s.calls:
		return c
	case <-time.After(testDeadline):
		t.Fatalf("no sink call within %v", testDeadline)
		panic("unreachable")
	}
}

// expect returns the next call, which must be of kind.
func (s *recordingSink) expect(t testing.TB, kind string) sinkCall {
	t.Helper()
	c := s.next(t)
	if c.kind != kind {
		t.Fatalf("sink call %+v, want %s", c, kind)
	}
	return c
}

// jobLog is a job's output as the sink saw it.
type jobLog struct {
	output string
	next   int64
	exit   *jobs.WorkerJobExit
}

// follow reads job's calls from worker until its output contains marker (or, with marker "",
// until JobFinished), checking that the output is contiguous from offset from.
func (s *recordingSink) follow(t testing.TB, worker string, job, from int64, marker string) jobLog {
	t.Helper()
	l := jobLog{next: from}
	for {
		if marker != "" && strings.Contains(l.output, marker) {
			return l
		}
		c := s.next(t)
		if c.worker != worker || c.job != job {
			t.Fatalf("following job %d of %s, got %+v", job, worker, c)
		}
		switch c.kind {
		case "JobStarted":
		case "JobOutput":
			if c.offset != l.next {
				t.Fatalf("job %d: output at %d, want %d", job, c.offset, l.next)
			}
			l.output += c.data
			l.next += int64(len(c.data))
		case "JobFinished":
			if marker != "" {
				t.Fatalf("job %d finished (%+v) before its output held %q: %q", job, c.exit, marker, l.output)
			}
			l.exit = &c.exit
			return l
		}
	}
}
