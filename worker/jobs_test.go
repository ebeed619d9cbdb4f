package worker_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/internal/jobproc"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/worker"
)

func TestWorkerJobs(t *testing.T) {
	credential := testenv.WorkerCredential("key-a")
	// The worker's own process environment holds its credential, as mindroom-worker's may.
	t.Setenv("MINDROOM_WORKER_CREDENTIAL", credential)
	t.Setenv("TURNCLI_WORKER_SECRET_PROBE", credential)
	fp := startFakePrimary(t)
	w := runWorker(t, fp)
	s, hello := fp.accept(t)
	if len(hello.GetJobs()) != 0 {
		t.Fatalf("a fresh worker's Hello holds jobs %v", hello.GetJobs())
	}
	s.send(&workerv1.ConnectResponse{Event: &workerv1.ConnectResponse_Welcome{Welcome: &workerv1.Welcome{SessionId: "s"}}})

	t.Run("JobStartsStreamsItsLogWithOffsetsAndFinishesWithItsCode", func(t *testing.T) {
		s.t = t
		var want strings.Builder
		for i := range 4000 { // several 32 KiB chunks
			fmt.Fprintf(&want, "line %04d of the job's output, stdout and stderr alike\n", i)
		}
		s.startJob(&workerv1.StartJob{JobId: 1, Command: `for i in $(seq 0 3999); do printf 'line %04d of the job'"'"'s output, stdout and stderr alike\n' $i; done; exit 3`})
		r := s.collectJob(1, 0)
		if !r.started {
			t.Error("no JobStarted before the output")
		}
		if !strings.HasSuffix(r.output, want.String()) {
			t.Errorf("output (%d bytes) does not end with the job's %d bytes: …%q", len(r.output), want.Len(), tail(r.output))
		}
		if e := r.exit; e.GetCode() != 3 || !e.GetCodeKnown() || e.GetTimedOut() || e.GetCancelled() || e.GetStartError() != "" {
			t.Errorf("exit = %v, want code 3", e)
		}
		rec := jobFile(w.stateDir, 1, ".json")
		fi, err := os.Stat(rec)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("record %s: %v, %v; want it kept, mode 0600, until the ack", rec, fi, err)
		}
		s.ackJob(1)
		eventually(t, "the acknowledged job's files are deleted", func() bool {
			return !exists(rec) && !exists(jobFile(w.stateDir, 1, ".log")) && !exists(jobFile(w.stateDir, 1, ".status"))
		})
	})

	t.Run("JobRunsInItsAgentsWorkspaceWithTheShellEnvironmentAndNeverTheCredential", func(t *testing.T) {
		s.t = t
		s.startJob(&workerv1.StartJob{JobId: 2, Agent: "alice", Command: `echo "pwd=$PWD"; env`,
			AgentCliEnv: map[string]string{
				"MINDROOM_AGENT_CLI_TOKEN":   "grant-value",
				"MINDROOM_AGENT_CLI_WINDOW":  "window-value",
				"MINDROOM_AGENT_CLI_URL":     "http://evil.example:1",
				"MINDROOM_WORKER_CREDENTIAL": credential,
				"PATH":                       "/evil",
			},
			ExtraEnv: map[string]string{
				"MINDROOM_AGENT_TASK":        "the brief",
				"MINDROOM_AGENT_CLI_URL":     "http://evil.example:2",
				"MINDROOM_AGENT_CLI_TOKEN":   "forged",
				"MINDROOM_WORKER_CREDENTIAL": credential,
				"MINDROOM_AGENT_lower":       "no",
				"LD_PRELOAD":                 "/evil.so",
			},
		})
		r := s.collectJob(2, 0)
		if r.exit.GetCode() != 0 {
			t.Fatalf("exit = %v", r.exit)
		}
		if strings.Contains(r.output, credential) || strings.Contains(r.output, "MINDROOM_WORKER") {
			t.Fatalf("the worker's credential reached the job:\n%s", r.output)
		}
		vars := map[string]string{}
		for _, line := range strings.Split(r.output, "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				vars[k] = v
			}
		}
		want := map[string]string{
			"pwd":                       filepath.Join(w.stateDir, "workspaces", "alice"),
			"MINDROOM_AGENT_CLI_TOKEN":  "grant-value",
			"MINDROOM_AGENT_CLI_WINDOW": "window-value",
			"MINDROOM_AGENT_CLI_URL":    w.ProxyURL(),
			"MINDROOM_AGENT_TASK":       "the brief",
		}
		for k, v := range want {
			if vars[k] != v {
				t.Errorf("%s = %q, want %q", k, vars[k], v)
			}
		}
		for _, k := range []string{"LD_PRELOAD", "MINDROOM_AGENT_lower", "TURNCLI_WORKER_SECRET_PROBE"} {
			if v, ok := vars[k]; ok {
				t.Errorf("%s=%q reached the job", k, v)
			}
		}
		s.ackJob(2)
	})

	t.Run("CancelStopsAJob", func(t *testing.T) {
		s.t = t
		s.startJob(&workerv1.StartJob{JobId: 3, Command: `echo ready; sleep 1000`, Grace: durationpb.New(5 * time.Second)})
		r := s.waitJob(3, 0, "ready")
		s.cancelJob(3)
		r2 := s.collectJob(3, r.next)
		if e := r2.exit; !e.GetCancelled() || e.GetTimedOut() || e.GetCode() != 143 || !e.GetCodeKnown() {
			t.Errorf("exit = %v, want cancelled with 143", e)
		}
		s.ackJob(3)
	})

	t.Run("CeilingStopsAJob", func(t *testing.T) {
		s.t = t
		s.startJob(&workerv1.StartJob{JobId: 4, Command: `sleep 1000`, Ceiling: durationpb.New(100 * time.Millisecond),
			Grace: durationpb.New(200 * time.Millisecond)})
		r := s.collectJob(4, 0)
		// 143 from the TERM; 137 when the TERM came in the job's first instant and only the KILL
		// after the grace reached it (internal/jobproc tests the codes exactly).
		if e := r.exit; !e.GetTimedOut() || e.GetCancelled() || (e.GetCode() != 143 && e.GetCode() != 137) || !e.GetCodeKnown() {
			t.Errorf("exit = %v, want timed out by TERM or KILL", e)
		}
		s.ackJob(4)
	})

	t.Run("JobThatCannotStartReportsWhyWithoutStarting", func(t *testing.T) {
		for i, req := range []*workerv1.StartJob{
			{Agent: "../escape", Command: "true"},
			{Command: "true", Ceiling: durationpb.New(0)},
			{Command: "   "},
		} {
			s.t = t
			req.JobId = int64(10 + i)
			s.startJob(req)
			r := s.collectJob(req.JobId, 0)
			if r.started || r.exit.GetStartError() == "" || r.exit.GetCodeKnown() {
				t.Errorf("job %d (%v): started %v, exit %v; want a start error only", req.JobId, req, r.started, r.exit)
			}
			if !exists(jobFile(w.stateDir, req.JobId, ".json")) {
				t.Errorf("job %d: the failed start is not recorded until acknowledged", req.JobId)
			}
			s.ackJob(req.JobId)
		}
	})

	t.Run("DuplicateStartJobIsIgnored", func(t *testing.T) {
		s.t = t
		g := newGate(t)
		s.startJob(&workerv1.StartJob{JobId: 20, Command: `echo first; ` + g.wait()})
		r := s.waitJob(20, 0, "first")
		s.startJob(&workerv1.StartJob{JobId: 20, Command: `echo second`})
		g.open()
		r2 := s.collectJob(20, r.next)
		if r2.started || strings.Contains(r.output+r2.output, "second") || r2.exit.GetCode() != 0 {
			t.Errorf("after a duplicate: started again %v, output %q, exit %v", r2.started, r.output+r2.output, r2.exit)
		}
		s.ackJob(20)
	})

	t.Run("AckOfARunningJobAndMessagesForUnknownJobsAreIgnored", func(t *testing.T) {
		s.t = t
		s.cancelJob(999)
		s.attachJob(999, 0)
		s.ackJob(999)
		g := newGate(t)
		s.startJob(&workerv1.StartJob{JobId: 21, Command: `echo waiting; ` + g.wait() + `; echo done`})
		r := s.waitJob(21, 0, "waiting")
		s.ackJob(21)
		g.open()
		r2 := s.collectJob(21, r.next)
		if r2.output != "done\n" || r2.exit.GetCode() != 0 {
			t.Errorf("job acknowledged while running: output %q, exit %v", r2.output, r2.exit)
		}
		s.ackJob(21)
	})

	t.Run("ReattachRestartsTheLogFromTheOffsetAsked", func(t *testing.T) {
		s.t = t
		s.startJob(&workerv1.StartJob{JobId: 22, Command: `echo abcdefghij`})
		r := s.collectJob(22, 0)
		s.attachJob(22, r.next-5)
		r2 := s.collectJob(22, r.next-5)
		if r2.output != "ghij\n" || r2.exit.GetCode() != 0 {
			t.Errorf("re-attached at %d: output %q, exit %v", r.next-5, r2.output, r2.exit)
		}
		s.ackJob(22)
	})

	t.Run("CommandsStillRunBesideJobs", func(t *testing.T) {
		s.t = t
		s.start(&workerv1.StartCommand{CommandId: "c", Agent: "tester", Command: `echo command`})
		if f := s.collect("c"); f.stdout != "command\n" {
			t.Errorf("command = %+v", f)
		}
	})
}

func TestWorkerJobsOutliveConnectionsAndRestarts(t *testing.T) {
	t.Run("WorkerRestartWhileAJobRunsReportsItRunningThenItsRealExit", func(t *testing.T) {
		fp := startFakePrimary(t)
		first := runWorker(t, fp)
		s := fp.welcome(t)
		g := newGate(t)
		s.startJob(&workerv1.StartJob{JobId: 7, Command: `echo started; ` + g.wait() + `; echo after; exit 5`})
		r := s.waitJob(7, 0, "started")
		first.stop()

		second := runWorker(t, fp, func(c *worker.Config) { c.StateDir = first.stateDir })
		s2, hello := fp.accept(t)
		if got := hello.GetJobs(); len(got) != 1 || got[0].GetJobId() != 7 || !got[0].GetRunning() || got[0].GetExit() != nil {
			t.Fatalf("Hello after the restart holds %v, want job 7 running", got)
		}
		s2.send(&workerv1.ConnectResponse{Event: &workerv1.ConnectResponse_Welcome{Welcome: &workerv1.Welcome{SessionId: "2"}}})
		s2.attachJob(7, r.next)
		g.open()
		r2 := s2.collectJob(7, r.next)
		if r2.output != "after\n" {
			t.Errorf("output after re-attaching at %d = %q, want only what followed", r.next, r2.output)
		}
		if e := r2.exit; e.GetCode() != 5 || !e.GetCodeKnown() || e.GetCancelled() || e.GetTimedOut() {
			t.Errorf("exit = %v, want the job's own code 5", e)
		}
		s2.ackJob(7)
		eventually(t, "the acknowledged job's record is deleted", func() bool { return !exists(jobFile(second.stateDir, 7, ".json")) })
	})

	t.Run("JobFinishingWhileTheWorkerIsDownIsReportedInEveryHelloUntilAcked", func(t *testing.T) {
		fp := startFakePrimary(t)
		first := runWorker(t, fp)
		s := fp.welcome(t)
		g := newGate(t)
		s.startJob(&workerv1.StartJob{JobId: 8, Command: g.wait() + `; exit 4`})
		if r := s.readJob(8, 0, func(r *jobRun) bool { return r.started }); !r.started {
			t.Fatal("job 8 did not start")
		}
		first.stop()
		g.open()
		eventually(t, "the job ends", func() bool { return !recordedAlive(t, first.stateDir, 8) })

		runWorker(t, fp, func(c *worker.Config) { c.StateDir = first.stateDir })
		for i := range 2 {
			s2, hello := fp.accept(t)
			got := hello.GetJobs()
			if len(got) != 1 || got[0].GetJobId() != 8 || got[0].GetRunning() ||
				got[0].GetExit().GetCode() != 4 || !got[0].GetExit().GetCodeKnown() {
				t.Fatalf("Hello %d holds %v, want job 8 finished with code 4", i, got)
			}
			s2.send(&workerv1.ConnectResponse{Event: &workerv1.ConnectResponse_Welcome{Welcome: &workerv1.Welcome{SessionId: "x"}}})
			if i == 0 {
				s2.end <- status.Error(codes.Unavailable, "primary restarting") // not acknowledged
				continue
			}
			s2.ackJob(8)
		}
		eventually(t, "the acknowledged job's files are deleted", func() bool {
			return !exists(jobFile(first.stateDir, 8, ".json")) && !exists(jobFile(first.stateDir, 8, ".log"))
		})
	})

	t.Run("JobFoundGoneWithoutAStatusHasAnUnknownCode", func(t *testing.T) {
		fp := startFakePrimary(t)
		first := runWorker(t, fp)
		s := fp.welcome(t)
		s.startJob(&workerv1.StartJob{JobId: 9, Command: `echo ready; exec sleep 1000`})
		s.waitJob(9, 0, "ready")
		first.stop()
		killRecorded(t, first.stateDir, 9) // as if the sandbox's processes died with it

		runWorker(t, fp, func(c *worker.Config) { c.StateDir = first.stateDir })
		_, hello := fp.accept(t)
		if got := hello.GetJobs(); len(got) != 1 || got[0].GetRunning() || got[0].GetExit().GetCodeKnown() {
			t.Fatalf("Hello holds %v, want job 9 finished with an unknown code", got)
		}
	})

	t.Run("LostConnectionLeavesTheJobRunningAndItsEndBeforeTheWelcomeIsReported", func(t *testing.T) {
		fp := startFakePrimary(t)
		w := runWorker(t, fp)
		s := fp.welcome(t)
		g := newGate(t)
		s.startJob(&workerv1.StartJob{JobId: 11, Command: `echo started; ` + g.wait() + `; exit 6`})
		s.waitJob(11, 0, "started")
		s.end <- status.Error(codes.Unavailable, "primary restarting")

		s2, hello := fp.accept(t)
		if got := hello.GetJobs(); len(got) != 1 || !got[0].GetRunning() {
			t.Fatalf("Hello after reconnecting holds %v, want job 11 running", got)
		}
		g.open()
		eventually(t, "the worker records the job's end", func() bool { return recordedState(t, w.stateDir, 11) == "finished" })
		s2.send(&workerv1.ConnectResponse{Event: &workerv1.ConnectResponse_Welcome{Welcome: &workerv1.Welcome{SessionId: "2"}}})
		s2.cancelJob(999) // any job message shows the primary handles job reports
		r := s2.collectJob(11, 0)
		if r.started || r.output != "" || r.exit.GetCode() != 6 || !r.exit.GetCodeKnown() {
			t.Errorf("not attached: started %v, output %q, exit %v; want JobFinished alone with code 6", r.started, r.output, r.exit)
		}
	})
}

func TestWorkerSendsNoJobReportsToAPrimaryThatSendsNoJobMessages(t *testing.T) {
	fp := startFakePrimary(t)
	first := runWorker(t, fp)
	s := fp.welcome(t)
	g := newGate(t)
	s.startJob(&workerv1.StartJob{JobId: 12, Command: `echo started; ` + g.wait() + `; exit 2`})
	s.waitJob(12, 0, "started")
	first.stop()

	// The next worker on the state dir connects to a primary that knows nothing of jobs.
	w := runWorker(t, fp, func(c *worker.Config) { c.StateDir = first.stateDir })
	s2, hello := fp.accept(t)
	if got := hello.GetJobs(); len(got) != 1 || !got[0].GetRunning() {
		t.Fatalf("Hello holds %v, want job 12 running", got)
	}
	s2.send(&workerv1.ConnectResponse{Event: &workerv1.ConnectResponse_Welcome{Welcome: &workerv1.Welcome{SessionId: "old"}}})
	g.open()
	eventually(t, "the worker records the job's end", func() bool { return recordedState(t, w.stateDir, 12) == "finished" })
	// collect fails on any message other than the command's: no JobFinished comes.
	s2.start(&workerv1.StartCommand{CommandId: "c", Agent: "tester", Command: `echo plain`})
	if f := s2.collect("c"); f.stdout != "plain\n" {
		t.Errorf("command = %+v", f)
	}
}

// jobRecord is what the tests read of a job's record.
type jobRecord struct {
	State     string `json:"state"`
	Pid       int    `json:"pid"`
	ProcStart uint64 `json:"proc_start"`
}

func readRecord(t *testing.T, stateDir string, id int64) jobRecord {
	t.Helper()
	b, err := os.ReadFile(jobFile(stateDir, id, ".json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec jobRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatalf("record %s: %v", b, err)
	}
	return rec
}

func recordedState(t *testing.T, stateDir string, id int64) string {
	return readRecord(t, stateDir, id).State
}

// recordedAlive reports whether the process recorded for job id is still running.
func recordedAlive(t *testing.T, stateDir string, id int64) bool {
	rec := readRecord(t, stateDir, id)
	if rec.Pid <= 0 {
		t.Fatalf("job %d has no recorded process: %+v", id, rec)
	}
	return jobproc.Alive(rec.Pid, rec.ProcStart)
}

// killRecorded kills the process group recorded for job id and waits until it is gone.
func killRecorded(t *testing.T, stateDir string, id int64) {
	t.Helper()
	rec := readRecord(t, stateDir, id)
	if p := jobproc.Find(rec.Pid, rec.ProcStart, ""); p != nil {
		_ = p.Signal(syscall.SIGKILL)
	}
	eventually(t, "the killed job is gone", func() bool { return !recordedAlive(t, stateDir, id) })
}
