package workerhub_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/internal/bashexec"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/workerhub"
	"github.com/turncli/turncli/worker"
)

func TestHubJobsOnARealWorker(t *testing.T) {
	sink := newSink()
	hub, env := startHub(t, sink)
	env.AgentBinary = "/bin/true"
	stateDir := t.TempDir()
	onState := func(c *worker.Config) { c.StateDir = stateDir }
	w := startWorker(t, env, "key-a", "real-1", onState)
	if c := sink.expect(t, "WorkerJobs"); c.key != "key-a" || c.worker != "real-1" || len(c.jobs) != 0 {
		t.Fatalf("first call = %+v, want the worker's empty job list", c)
	}
	ctx := deadline(t)

	t.Run("JobRunsAndItsLogAndExitReachTheSink", func(t *testing.T) {
		b := &response.Binding{}
		id, err := hub.StartJob(ctx, "key-a", b, jobs.WorkerJob{ID: 1, Agent: "tester", Command: "echo hello; exit 3", Ceiling: time.Hour})
		if err != nil || id != "real-1" || b.WorkerID() != "real-1" {
			t.Fatalf("StartJob = %q, %v (bound to %q)", id, err, b.WorkerID())
		}
		if c := sink.expect(t, "JobStarted"); c.job != 1 || c.worker != "real-1" {
			t.Fatalf("JobStarted = %+v", c)
		}
		l := sink.follow(t, "real-1", 1, 0, "")
		if !strings.HasSuffix(l.output, "hello\n") || *l.exit != (jobs.WorkerJobExit{Code: 3, CodeKnown: true}) {
			t.Errorf("output %q, exit %+v; want hello and code 3", l.output, l.exit)
		}
		if err := hub.AckJob("real-1", 1); err != nil {
			t.Fatalf("AckJob: %v", err)
		}
		eventually(t, "the acknowledged job's record is deleted", func() bool {
			_, err := os.Stat(filepath.Join(stateDir, "jobs", "1.json"))
			return errors.Is(err, os.ErrNotExist)
		})
	})

	t.Run("CancelReachesTheWorker", func(t *testing.T) {
		if _, err := hub.StartJob(ctx, "key-a", nil, jobs.WorkerJob{ID: 2, Agent: "tester", Command: "echo ready; sleep 1000", Ceiling: time.Hour}); err != nil {
			t.Fatal(err)
		}
		l := sink.follow(t, "real-1", 2, 0, "ready")
		if err := hub.CancelJob("real-1", 2); err != nil {
			t.Fatal(err)
		}
		l = sink.follow(t, "real-1", 2, l.next, "")
		if !l.exit.Cancelled || l.exit.Code != 143 {
			t.Errorf("exit = %+v, want cancelled", l.exit)
		}
		_ = hub.AckJob("real-1", 2)
	})

	t.Run("WorkerRestartReportsTheRunningJobWhichIsReattachedAndFinishes", func(t *testing.T) {
		gate := filepath.Join(t.TempDir(), "gate.fifo")
		if err := syscall.Mkfifo(gate, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := hub.StartJob(ctx, "key-a", nil, jobs.WorkerJob{ID: 3, Agent: "tester",
			Command: `echo started; read -r _ <'` + gate + `'; echo after; exit 5`, Ceiling: time.Hour}); err != nil {
			t.Fatal(err)
		}
		l := sink.follow(t, "real-1", 3, 0, "started")
		w.Stop()
		startWorker(t, env, "key-a", "real-1", onState)
		c := sink.expect(t, "WorkerJobs")
		if len(c.jobs) != 1 || c.jobs[0] != (jobs.WorkerJobState{ID: 3, Running: true}) {
			t.Fatalf("WorkerJobs after the restart = %+v, want job 3 running", c.jobs)
		}
		if err := hub.AttachJob("real-1", 3, l.next); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(gate, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		_, _ = f.WriteString("go\n")
		l = sink.follow(t, "real-1", 3, l.next, "")
		if l.output != "after\n" || *l.exit != (jobs.WorkerJobExit{Code: 5, CodeKnown: true}) {
			t.Errorf("after re-attaching: output %q, exit %+v", l.output, l.exit)
		}
		_ = hub.AckJob("real-1", 3)
	})
}

func TestHubStartJob(t *testing.T) {
	hub, env := startHub(t, newSink())
	fa := startFake(t, env, "key-a", "fa")
	fb := startFake(t, env, "key-a", "fb")
	fakes := map[string]*fakeWorker{"fa": fa, "fb": fb}
	ctx := deadline(t)
	job := func(id int64) jobs.WorkerJob {
		return jobs.WorkerJob{
			ID: id, Agent: "tester", Command: "run it", Ceiling: time.Hour, Grace: 3 * time.Second,
			AgentCLIEnv: map[string]string{"MINDROOM_AGENT_CLI_TOKEN": "t", "MINDROOM_AGENT_CLI_WINDOW": "w"},
			ExtraEnv:    map[string]string{"MINDROOM_AGENT_TASK": "brief"},
		}
	}
	bound := func(id string) *response.Binding {
		b := &response.Binding{}
		b.Bind(id)
		return b
	}
	// started checks that worker got StartJob for job id with every field.
	started := func(t *testing.T, worker string, id int64) {
		t.Helper()
		msg := fakes[worker].next()
		s := msg.GetStartJob()
		if s.GetJobId() != id || s.GetAgent() != "tester" || s.GetCommand() != "run it" ||
			s.GetCeiling().AsDuration() != time.Hour || s.GetGrace().AsDuration() != 3*time.Second ||
			s.GetAgentCliEnv()["MINDROOM_AGENT_CLI_TOKEN"] != "t" || s.GetExtraEnv()["MINDROOM_AGENT_TASK"] != "brief" {
			t.Fatalf("%s got %v, want StartJob %d", worker, msg, id)
		}
	}

	t.Run("BoundConnectedWorkerGetsTheJob", func(t *testing.T) {
		for i, id := range []string{"fa", "fb"} {
			got, err := hub.StartJob(ctx, "key-a", bound(id), job(int64(10+i)))
			if err != nil || got != id {
				t.Fatalf("StartJob bound to %s = %q, %v", id, got, err)
			}
			started(t, id, int64(10+i))
		}
	})
	t.Run("UnboundBindingIsBoundToTheWorkerChosen", func(t *testing.T) {
		b := &response.Binding{}
		got, err := hub.StartJob(ctx, "key-a", b, job(20))
		if err != nil || b.WorkerID() != got {
			t.Fatalf("StartJob = %q, %v; binding %q", got, err, b.WorkerID())
		}
		started(t, got, 20)
	})
	t.Run("BindingToADisconnectedWorkerIsKeptAndAnotherWorkerRunsTheJob", func(t *testing.T) {
		b := bound("gone")
		got, err := hub.StartJob(ctx, "key-a", b, job(21))
		if err != nil || b.WorkerID() != "gone" {
			t.Fatalf("StartJob = %q, %v; binding %q", got, err, b.WorkerID())
		}
		started(t, got, 21)
	})
	t.Run("NilBindingRunsOnAnyWorker", func(t *testing.T) {
		got, err := hub.StartJob(ctx, "key-a", nil, job(22))
		if err != nil {
			t.Fatal(err)
		}
		started(t, got, 22)
	})
	t.Run("NoWorkerOfTheKeyIsAnError", func(t *testing.T) {
		b := bound("fa")
		if _, err := hub.StartJob(ctx, "key-b", b, job(23)); !errors.Is(err, workerhub.ErrNotConnected) {
			t.Fatalf("StartJob on key-b = %v, want ErrNotConnected", err)
		}
		if b.WorkerID() != "fa" {
			t.Errorf("binding changed to %q", b.WorkerID())
		}
	})
	t.Run("InvalidJobsAreRefusedAndNothingIsSent", func(t *testing.T) {
		for name, edit := range map[string]func(*jobs.WorkerJob){
			"NoID":                  func(j *jobs.WorkerJob) { j.ID = 0 },
			"BlankCommand":          func(j *jobs.WorkerJob) { j.Command = " \n" },
			"NoAgent":               func(j *jobs.WorkerJob) { j.Agent = "" },
			"NoCeiling":             func(j *jobs.WorkerJob) { j.Ceiling = 0 },
			"NegativeGrace":         func(j *jobs.WorkerJob) { j.Grace = -time.Second },
			"PathInAgentCLIEnv":     func(j *jobs.WorkerJob) { j.AgentCLIEnv["PATH"] = "/evil" },
			"CLIURLInExtraEnv":      func(j *jobs.WorkerJob) { j.ExtraEnv["MINDROOM_AGENT_CLI_URL"] = "http://evil" },
			"LowercaseInExtraEnv":   func(j *jobs.WorkerJob) { j.ExtraEnv["MINDROOM_AGENT_task"] = "x" },
			"OtherVariableExtraEnv": func(j *jobs.WorkerJob) { j.ExtraEnv["LD_PRELOAD"] = "/evil.so" },
		} {
			j := job(30)
			edit(&j)
			if _, err := hub.StartJob(ctx, "key-a", bound("fa"), j); !errors.Is(err, workerhub.ErrInvalidJob) {
				t.Errorf("%s: StartJob = %v, want ErrInvalidJob", name, err)
			}
		}
		if err := hub.AttachJob("fa", 30, -1); !errors.Is(err, workerhub.ErrInvalidJob) {
			t.Errorf("AttachJob at a negative offset = %v, want ErrInvalidJob", err)
		}
		// Nothing reached fa: the next message it sees is this job's.
		if _, err := hub.StartJob(ctx, "key-a", bound("fa"), job(31)); err != nil {
			t.Fatal(err)
		}
		started(t, "fa", 31)
	})
	t.Run("CancelAttachAndAckGoToTheNamedWorkerInOrder", func(t *testing.T) {
		if err := hub.CancelJob("fb", 40); err != nil {
			t.Fatal(err)
		}
		if err := hub.AttachJob("fb", 41, 1234); err != nil {
			t.Fatal(err)
		}
		if err := hub.AckJob("fb", 42); err != nil {
			t.Fatal(err)
		}
		if m := fb.next(); m.GetCancelJob().GetJobId() != 40 {
			t.Errorf("first = %v, want CancelJob 40", m)
		}
		if m := fb.next(); m.GetAttachJob().GetJobId() != 41 || m.GetAttachJob().GetLogOffset() != 1234 {
			t.Errorf("second = %v, want AttachJob 41 at 1234", m)
		}
		if m := fb.next(); m.GetAckJob().GetJobId() != 42 {
			t.Errorf("third = %v, want AckJob 42", m)
		}
	})
	t.Run("CancelAttachAndAckToAWorkerNotConnectedAreErrors", func(t *testing.T) {
		for name, err := range map[string]error{
			"CancelJob": hub.CancelJob("nobody", 1),
			"AttachJob": hub.AttachJob("nobody", 1, 0),
			"AckJob":    hub.AckJob("nobody", 1),
		} {
			if !errors.Is(err, workerhub.ErrNotConnected) {
				t.Errorf("%s = %v, want ErrNotConnected", name, err)
			}
		}
	})
}

func helloWith(key, id string, jobs ...*workerv1.JobState) *workerv1.ConnectRequest {
	h := hello(key, id)
	h.Jobs = jobs
	return &workerv1.ConnectRequest{Event: &workerv1.ConnectRequest_Hello{Hello: h}}
}

func TestHubRefusesMalformedJobReports(t *testing.T) {
	_, env := startHub(t, newSink())
	finished := &workerv1.JobExit{Code: 0, CodeKnown: true}
	hellos := map[string][]*workerv1.JobState{
		"HelloWithJobIDZero":               {{JobId: 0, Running: true}},
		"HelloWithAJobTwice":               {{JobId: 1, Running: true}, {JobId: 1, Exit: finished}},
		"HelloWithAFinishedJobWithoutExit": {{JobId: 1}},
	}
	for name, jobs := range hellos {
		t.Run(name, func(t *testing.T) {
			_, _, err := connect(t, env, "test-worker-credential-for-key-a", "bad-hello", helloWith("key-a", "bad-hello", jobs...))
			if status.Code(err) != codes.InvalidArgument {
				t.Errorf("connect = %v, want InvalidArgument", err)
			}
		})
	}
	reports := map[string]*workerv1.ConnectRequest{
		"OutputOver32KiB": {Event: &workerv1.ConnectRequest_JobOutput{JobOutput: &workerv1.JobOutput{
			JobId: 1, Data: make([]byte, bashexec.ChunkSize+1)}}},
		"OutputAtANegativeOffset": {Event: &workerv1.ConnectRequest_JobOutput{JobOutput: &workerv1.JobOutput{JobId: 1, Offset: -1, Data: []byte("x")}}},
		"StartedWithoutAJobID":    {Event: &workerv1.ConnectRequest_JobStarted{JobStarted: &workerv1.JobStarted{}}},
		"FinishedWithoutItsExit":  {Event: &workerv1.ConnectRequest_JobFinished{JobFinished: &workerv1.JobFinished{JobId: 1}}},
	}
	for name, msg := range reports {
		t.Run(name, func(t *testing.T) {
			f := startFake(t, env, "key-a", "bad-"+name)
			f.send(msg)
			if st := f.ended(); st.Code() != codes.InvalidArgument {
				t.Errorf("connection ended with %v, want InvalidArgument", st)
			}
		})
	}
}

func TestHubJobReports(t *testing.T) {
	report := func(f *fakeWorker, msg *workerv1.ConnectRequest) { f.send(msg) }
	output := func(job, off int64, data string) *workerv1.ConnectRequest {
		return &workerv1.ConnectRequest{Event: &workerv1.ConnectRequest_JobOutput{JobOutput: &workerv1.JobOutput{JobId: job, Offset: off, Data: []byte(data)}}}
	}
	finishedMsg := func(job int64, e *workerv1.JobExit) *workerv1.ConnectRequest {
		return &workerv1.ConnectRequest{Event: &workerv1.ConnectRequest_JobFinished{JobFinished: &workerv1.JobFinished{JobId: job, Exit: e}}}
	}

	t.Run("ReportsReachTheSinkConvertedAndInOrder", func(t *testing.T) {
		sink := newSink()
		_, env := startHub(t, sink)
		f, msg, err := connect(t, env, "test-worker-credential-for-key-a", "w", helloWith("key-a", "w",
			&workerv1.JobState{JobId: 4, Running: true},
			&workerv1.JobState{JobId: 5, Exit: &workerv1.JobExit{Code: 143, CodeKnown: true, TimedOut: true}}))
		if err != nil || msg.GetWelcome() == nil {
			t.Fatalf("connect = %v, %v", msg, err)
		}
		report(f, &workerv1.ConnectRequest{Event: &workerv1.ConnectRequest_JobStarted{JobStarted: &workerv1.JobStarted{JobId: 6}}})
		report(f, output(6, 0, "ab"))
		report(f, output(6, 2, "c"))
		report(f, finishedMsg(6, &workerv1.JobExit{StartError: strings.Repeat("é", 2000)}))

		c := sink.expect(t, "WorkerJobs")
		want := []jobs.WorkerJobState{{ID: 4, Running: true}, {ID: 5, Exit: jobs.WorkerJobExit{Code: 143, CodeKnown: true, TimedOut: true}}}
		if c.key != "key-a" || c.worker != "w" || len(c.jobs) != 2 || c.jobs[0] != want[0] || c.jobs[1] != want[1] {
			t.Errorf("WorkerJobs = %+v, want %+v", c, want)
		}
		if c := sink.expect(t, "JobStarted"); c.job != 6 || c.worker != "w" {
			t.Errorf("JobStarted = %+v", c)
		}
		if c := sink.expect(t, "JobOutput"); c.offset != 0 || c.data != "ab" {
			t.Errorf("first output = %+v", c)
		}
		if c := sink.expect(t, "JobOutput"); c.offset != 2 || c.data != "c" {
			t.Errorf("second output = %+v", c)
		}
		c = sink.expect(t, "JobFinished")
		if len(c.exit.StartError) > 1100 || !strings.HasPrefix(c.exit.StartError, "éé") || !strings.HasSuffix(c.exit.StartError, "…") {
			t.Errorf("start error of %d bytes: %q…, want it bounded", len(c.exit.StartError), c.exit.StartError[:20])
		}
	})

	t.Run("ReportsCarryTheConnectionsContextWhichEndsWithIt", func(t *testing.T) {
		sink := newSink()
		_, env := startHub(t, sink)
		f := startFake(t, env, "key-a", "w")
		report(f, output(7, 0, "x"))
		held, out := sink.expect(t, "WorkerJobs"), sink.expect(t, "JobOutput")
		if held.ctx != out.ctx {
			t.Errorf("WorkerJobs and JobOutput got different contexts; want the connection's one")
		}
		if err := out.ctx.Err(); err != nil {
			t.Fatalf("context of a live connection's report: %v, want it live", err)
		}
		f.hangUp()
		select {
		case <-out.ctx.Done():
		case <-time.After(testDeadline):
			t.Fatalf("the reports' context did not end within %v of the worker hanging up", testDeadline)
		}
		if !errors.Is(out.ctx.Err(), context.Canceled) {
			t.Errorf("context ended with %v, want context.Canceled", out.ctx.Err())
		}
	})

	t.Run("ANewConnectionsReportsFollowEveryReportOfThePreviousOne", func(t *testing.T) {
		sink := newSink()
		release := make(chan struct{})
		var once bool
		sink.hold = func(c sinkCall) {
			if c.kind == "JobOutput" && !once {
				once = true
				<-release
			}
		}
		hub, env := startHub(t, sink)
		old := startFake(t, env, "key-a", "w")
		sink.expect(t, "WorkerJobs")
		report(old, output(7, 0, "x")) // the sink holds this one
		sink.expect(t, "JobOutput")
		startFake(t, env, "key-a", "w") // replaces old
		if err := hub.CancelJob("w", 7); err != nil {
			t.Fatal(err) // the new connection is routable at once
		}
		sink.calls <- sinkCall{kind: "released"}
		close(release)
		if c := sink.next(t); c.kind != "released" {
			t.Fatalf("while the previous connection's report was held, the sink got %+v", c)
		}
		if c := sink.expect(t, "WorkerJobs"); c.worker != "w" {
			t.Errorf("WorkerJobs = %+v", c)
		}
	})

	t.Run("ASlowSinkDoesNotHoldUpCommands", func(t *testing.T) {
		sink := newSink()
		release := make(chan struct{})
		sink.hold = func(c sinkCall) {
			if c.kind == "JobOutput" {
				<-release
			}
		}
		t.Cleanup(func() { close(release) })
		hub, env := startHub(t, sink)
		f := startFake(t, env, "key-a", "w")
		for i := range 10 {
			report(f, output(8, int64(i), "x"))
		}
		runCommandThrough(t, hub, f)
	})
}

// runCommandThrough runs a command on the fake worker f through hub.Run, the fake answering it.
func runCommandThrough(t *testing.T, hub *workerhub.Hub, f *fakeWorker) {
	t.Helper()
	ctx := deadline(t)
	done := make(chan runOutcome, 1)
	var got strings.Builder
	go func() {
		res, err := hub.Run(ctx, shellCommand("key-a", "echo hi"), func(_ bashexec.Stream, b []byte) { got.Write(b) })
		done <- runOutcome{res, err}
	}()
	start := f.nextStart()
	f.output(start.GetCommandId(), stdout, "hi\n")
	f.exit(&workerv1.CommandExited{CommandId: start.GetCommandId(), ExitCode: 2})
	r := await(t, ctx, done, "Run")
	if r.err != nil || r.res.ExitCode != 2 || got.String() != "hi\n" {
		t.Errorf("Run = %+v, %v, output %q", r.res, r.err, got.String())
	}
}

// eventually polls cond until it holds or the test deadline passes.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(testDeadline)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("%s: not within %v", what, testDeadline)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A job is not sent to a worker that just connected until the sink has taken the worker's first
// report: that report says which of the worker's jobs it lost, and a job sent meanwhile is in
// no Hello, so it would be judged lost.
func TestHubSendsNoJobBeforeTheWorkersFirstReportIsTaken(t *testing.T) {
	sink := newSink()
	release := make(chan struct{})
	sink.hold = func(c sinkCall) {
		if c.kind == "WorkerJobs" {
			<-release
		}
	}
	hub, env := startHub(t, sink)
	f := startFake(t, env, "key-a", "fa")
	sink.expect(t, "WorkerJobs") // held in the sink

	held, cancel := context.WithTimeout(deadline(t), 50*time.Millisecond)
	defer cancel()
	if _, err := hub.StartJob(held, "key-a", nil, jobs.WorkerJob{ID: 1, Agent: "tester", Command: "run it", Ceiling: time.Hour}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("StartJob while the first report is in the sink: %v, want it to wait until ctx ends", err)
	}
	close(release)
	if _, err := hub.StartJob(deadline(t), "key-a", nil, jobs.WorkerJob{ID: 2, Agent: "tester", Command: "run it", Ceiling: time.Hour}); err != nil {
		t.Fatalf("StartJob once the report was taken: %v", err)
	}
	if got := f.next().GetStartJob().GetJobId(); got != 2 {
		t.Fatalf("the worker's first job is %d, want 2 (job 1 was never sent)", got)
	}
}
