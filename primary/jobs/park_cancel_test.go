package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/turncli/turncli/client/engines"
	"github.com/turncli/turncli/primary/store"
)

// parkingSpec is an engine agent job whose run ends parked on a tool use, and whose Parker
// parks it on a new pending permission prompt after calling beforePark.
func (e *testEnv) parkingSpec(t *testing.T, beforePark func(id int64)) JobSpec {
	t.Helper()
	var line strings.Builder
	if err := engines.WriteResult(&line, engines.Result{Engine: "test", Status: engines.StatusParked, Session: "s-1",
		Parked: &engines.Parked{CallID: "c1", ToolUseID: "toolu_1", Tool: "Bash"}}); err != nil {
		t.Fatal(err)
	}
	spec := e.spec(t, "printf '%s' '"+line.String()+"'")
	spec.Kind, spec.Engine = "agent", "test"
	spec.Park = func(ctx context.Context, job store.Job, r engines.Result) error {
		beforePark(job.ID)
		pr, err := e.s.CreatePrompt(ctx, store.NewPrompt{Kind: store.PromptPermission, Channel: job.Channel, Thread: job.Thread,
			Requester: "@alice", Agent: "coder", ResponseID: "r1", CallID: r.Parked.CallID, ToolName: r.Parked.Tool,
			ToolUseID: r.Parked.ToolUseID, MaskedInput: json.RawMessage(`{}`), Deadline: time.Now().Add(time.Hour)})
		if err != nil {
			return err
		}
		return e.s.ParkJob(ctx, job.ID, store.Parking{Session: r.Session, PromptID: pr.ID, ToolUseID: r.Parked.ToolUseID,
			Tool: r.Parked.Tool}, store.EngineRun{Session: r.Session, Runs: 1})
	}
	return spec
}

// TestACancelWhileAJobParksEndsIt: a job whose process has ended but which is not parked yet
// is still tracked; a cancel then must end the job, not leave it parked.
func TestACancelWhileAJobParksEndsIt(t *testing.T) {
	e := newEnv(t, nil)
	cancelled := make(chan error, 1)
	id := e.start(t, e.parkingSpec(t, func(id int64) { cancelled <- e.m.Cancel(context.Background(), id) }))
	j := e.finished(t, id)
	if err := <-cancelled; err != nil {
		t.Fatalf("cancel while parking: %v", err)
	}
	if j.Outcome != OutcomeCancelled || j.Parked() {
		t.Fatalf("outcome %q, parked %v; want cancelled and not parked", j.Outcome, j.Parked())
	}
	if err := e.m.Cancel(context.Background(), id); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("second cancel: err = %v, want ErrNotRunning", err)
	}
}

// TestACancelOfAParkedJobEndsIt: once parked, a job is no longer tracked, and a cancel
// finishes it from its saved parking.
func TestACancelOfAParkedJobEndsIt(t *testing.T) {
	e := newEnv(t, nil)
	id := e.start(t, e.parkingSpec(t, func(int64) {}))
	for end := time.Now().Add(waitBound); ; time.Sleep(5 * time.Millisecond) {
		rec, err := e.s.Job(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Parked() {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the job did not park: %+v", rec)
		}
	}
	if err := e.m.Cancel(context.Background(), id); err != nil {
		t.Fatalf("cancel of a parked job: %v", err)
	}
	if j := e.finished(t, id); j.Outcome != OutcomeCancelled {
		t.Fatalf("outcome %q, want %q", j.Outcome, OutcomeCancelled)
	}
}

// TestARunResumedBeforeTheLastOneIsForgottenStaysTracked: a decision can resume a parked job
// while its last run's supervisor is still ending (its OnEnd runs); forgetting that run must
// not forget the new one.
func TestARunResumedBeforeTheLastOneIsForgottenStaysTracked(t *testing.T) {
	e := newEnv(t, nil)
	spec := e.parkingSpec(t, func(int64) {})
	// The first run parks; the resumed one runs until it is killed.
	spec.Command = "if [ -e resumed ]; then sleep 30; else touch resumed; " + spec.Command + "; fi"
	resumed := make(chan error, 1)
	spec.OnEnd = func() {
		rec, err := e.s.UnparkJob(context.Background(), jobID(t, e))
		if err == nil {
			err = e.m.Resume(context.Background(), rec, JobSpec{Env: spec.Env})
		}
		resumed <- err
	}
	id := e.start(t, spec)
	if err := <-resumed; err != nil {
		t.Fatalf("resume: %v", err)
	}
	e.m.Close() // waits for the first run's supervisor to end; the resumed run goes on
	run := e.m.tracked(id)
	if run == nil {
		t.Fatal("the resumed run is not tracked: its supervisor's end forgot it")
	}
	if err := syscall.Kill(-run.rec.Pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill the resumed run: %v", err)
	}
}

// jobID is the id of the only job in e's store.
func jobID(t *testing.T, e *testEnv) int64 {
	t.Helper()
	jobs, err := e.s.ListJobs(context.Background(), "")
	if err != nil || len(jobs) != 1 {
		t.Fatalf("jobs = %v, %v; want one", jobs, err)
	}
	return jobs[0].ID
}
