package drivertest

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/turncli/turncli/primary/store"
)

// testParking: an agent job parked on a pending permission prompt keeps its place under the
// caps with no process, its prompt outlives the boot's expiry, and it ends exactly once, by
// running again or finishing parked.
func (cf conformance) testParking(t *testing.T) {
	ctx := context.Background()
	caps := store.JobCaps{Total: 3, PerThread: 1}
	agentJob := func() store.NewJob {
		j := newJob("t1")
		j.Kind, j.Engine = "agent", "claude"
		return j
	}
	parked := func(t *testing.T, s store.Store) (store.Job, store.Prompt, store.Parking) {
		t.Helper()
		j, err := s.CreateJob(ctx, agentJob(), caps)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetJobProcess(ctx, j.ID, 42, 777); err != nil {
			t.Fatal(err)
		}
		pr, err := s.CreatePrompt(ctx, newPermissionPrompt("t1", "Bash"))
		if err != nil {
			t.Fatal(err)
		}
		p := store.Parking{Session: "s-1", PromptID: pr.ID, ToolUseID: "toolu_1", Tool: "Bash", Home: "/state/engines/1",
			Toolkits: []string{"interaction"}}
		if err := s.ParkJob(ctx, j.ID, p, store.EngineRun{Session: "s-1", Turns: 2, CostUSD: 0.5, Runs: 1}); err != nil {
			t.Fatal(err)
		}
		return j, pr, p
	}

	t.Run("AParkedJobKeepsItsPlaceAndForgetsItsProcess", func(t *testing.T) {
		s := cf.open(t, nil, &clock{t: t0})
		j, pr, p := parked(t, s)
		got, err := s.Job(ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != store.JobRunning || !got.Parked() || got.Pid != 0 || got.ProcStart != 0 || got.Engine != "claude" {
			t.Fatalf("parked job = %+v", got)
		}
		if !reflect.DeepEqual(*got.Parking, p) {
			t.Fatalf("parking = %+v, want %+v", *got.Parking, p)
		}
		if got.Run == nil || got.Run.Turns != 2 || got.Run.CostUSD != 0.5 || got.Run.Session != "s-1" {
			t.Fatalf("run = %+v", got.Run)
		}
		if _, err := s.CreateJob(ctx, agentJob(), caps); !errors.Is(err, store.ErrThreadJobCapReached) {
			t.Fatalf("a parked job counts under the caps: err = %v", err)
		}
		if gotPr, err := s.Prompt(ctx, pr.ID); err != nil || gotPr.ParkedJob != j.ID || gotPr.Status != store.PromptPending {
			t.Fatalf("prompt = %+v, %v", gotPr, err)
		}
		if err := s.ParkJob(ctx, j.ID, p, store.EngineRun{}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("parking twice: err = %v, want ErrConflict", err)
		}
	})

	t.Run("ThePromptOfAParkedJobOutlivesTheBootExpiry", func(t *testing.T) {
		s := cf.open(t, nil, &clock{t: t0})
		_, pr, _ := parked(t, s)
		other, err := s.CreatePrompt(ctx, newPermissionPrompt("t2", "Edit"))
		if err != nil {
			t.Fatal(err)
		}
		expired, err := s.ExpirePendingPrompts(ctx, "the primary restarted")
		if err != nil {
			t.Fatal(err)
		}
		if len(expired) != 1 || expired[0].ID != other.ID {
			t.Fatalf("expired = %+v, want only prompt %d", expired, other.ID)
		}
		if got, _ := s.Prompt(ctx, pr.ID); got.Status != store.PromptPending {
			t.Fatalf("parked prompt = %s, want pending", got.Status)
		}
		decided, err := s.DecidePrompt(ctx, pr.ID, "alice", store.DecisionAllowOnce, "")
		if err != nil || decided.ParkedJob == 0 {
			t.Fatalf("decided = %+v, %v", decided, err)
		}
	})

	t.Run("UnparkOnceThenTheJobRunsAndFinishes", func(t *testing.T) {
		s := cf.open(t, nil, &clock{t: t0})
		j, _, p := parked(t, s)
		was, err := s.UnparkJob(ctx, j.ID)
		if err != nil || was.Parking == nil || was.Parking.Session != p.Session {
			t.Fatalf("unpark = %+v, %v", was, err)
		}
		if _, err := s.UnparkJob(ctx, j.ID); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("second unpark: err = %v, want ErrConflict", err)
		}
		if _, _, err := s.FinishParkedJob(ctx, j.ID, store.JobResult{Outcome: "cancelled on request"}, cont(j.ID)); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("finishing an unparked job as parked: err = %v, want ErrConflict", err)
		}
		run := &store.EngineRun{Session: "s-1", Turns: 5, StopReason: "success", Errors: []string{"none"}, Runs: 2}
		if _, _, err := s.FinishJob(ctx, j.ID, store.JobResult{Outcome: "success", Run: run}, cont(j.ID)); err != nil {
			t.Fatal(err)
		}
		got, _ := s.Job(ctx, j.ID)
		if got.Status != store.JobFinished || got.Parked() || !reflect.DeepEqual(got.Run, run) {
			t.Fatalf("finished = %+v (run %+v)", got, got.Run)
		}
	})

	t.Run("AParkedJobFinishesParkedOnce", func(t *testing.T) {
		s := cf.open(t, nil, &clock{t: t0})
		j, _, _ := parked(t, s)
		finished, created, err := s.FinishParkedJob(ctx, j.ID, store.JobResult{Outcome: "cancelled on request"}, cont(j.ID))
		if err != nil || !finished || !created {
			t.Fatalf("finish parked = %v, %v, %v", finished, created, err)
		}
		got, _ := s.Job(ctx, j.ID)
		if got.Status != store.JobFinished || got.Parked() || got.Outcome != "cancelled on request" || got.Run != nil {
			t.Fatalf("job = %+v", got)
		}
		if _, _, err := s.FinishParkedJob(ctx, j.ID, store.JobResult{Outcome: "x"}, cont(j.ID)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("again: err = %v, want ErrNotFound", err)
		}
	})

	t.Run("RecordsAreBoundedAndAPromptHoldsOneJob", func(t *testing.T) {
		s := cf.open(t, nil, &clock{t: t0})
		j, err := s.CreateJob(ctx, agentJob(), caps)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := s.CreatePrompt(ctx, newPermissionPrompt("t1", "Bash"))
		if err != nil {
			t.Fatal(err)
		}
		p := store.Parking{Session: "s", PromptID: pr.ID}
		// The stored JSON of the run may be at most MaxEngineRunBytes.
		over := store.EngineRun{Errors: []string{strings.Repeat("e", store.MaxEngineRunBytes)}}
		if err := s.ParkJob(ctx, j.ID, p, over); !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("oversized run: err = %v, want ErrInvalid", err)
		}
		if _, err := s.ExpirePrompt(ctx, pr.ID, "nobody answered"); err != nil {
			t.Fatal(err)
		}
		// Decided between the engine's stop and the park: parked all the same, to resume at once.
		if err := s.ParkJob(ctx, j.ID, p, store.EngineRun{}); err != nil {
			t.Fatalf("parking on a prompt decided meanwhile: %v", err)
		}
		if got, _ := s.Job(ctx, j.ID); !got.Parked() {
			t.Fatal("the job is not parked")
		}
		if got, _ := s.Prompt(ctx, pr.ID); got.Status != store.PromptExpired || got.ParkedJob != 0 {
			t.Fatalf("the decided prompt changed: %+v", got)
		}
		other, err := s.CreateJob(ctx, agentJob(), store.JobCaps{})
		if err != nil {
			t.Fatal(err)
		}
		held, err := s.CreatePrompt(ctx, newPermissionPrompt("t1", "Bash"))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.ParkJob(ctx, other.ID, store.Parking{Session: "s", PromptID: held.ID}, store.EngineRun{}); err != nil {
			t.Fatal(err)
		}
		third, err := s.CreateJob(ctx, agentJob(), store.JobCaps{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.ParkJob(ctx, third.ID, store.Parking{Session: "s", PromptID: held.ID}, store.EngineRun{}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("parking on a prompt that holds another job: err = %v, want ErrConflict", err)
		}
		if got, _ := s.Job(ctx, third.ID); got.Parked() {
			t.Fatal("a refused park changed the job")
		}
		bad := agentJob()
		bad.Engine = strings.Repeat("x", store.MaxEngineName+1)
		if _, err := s.CreateJob(ctx, bad, caps); !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("engine name over the limit: err = %v", err)
		}
		bad.Engine = strings.Repeat("x", store.MaxEngineName)
		if _, err := s.CreateJob(ctx, bad, store.JobCaps{}); err != nil {
			t.Fatalf("engine name at the limit: %v", err)
		}
	})
}
