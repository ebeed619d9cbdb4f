package drivertest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// approvedJob is the job an approval starts.
func approvedJob(ap store.Approval) store.NewJob {
	return store.NewJob{Kind: ap.Kind, Command: ap.Command, Label: ap.Label, Channel: ap.Channel, Thread: ap.Thread,
		Author: ap.Author, Agent: ap.Agent, Workspace: "/work", WorkerKey: ap.WorkerKey, Ceiling: ap.Ceiling, LogDir: "/state/jobs"}
}

// executing saves an approval for command in thread and approves it.
func executing(t *testing.T, s store.Store, thread, command string) store.Approval {
	t.Helper()
	ap := save(t, s, newApproval(thread, command))
	ap, err := s.BeginApproval(context.Background(), ap.ID, "admin")
	if err != nil {
		t.Fatal(err)
	}
	return ap
}

func (cf conformance) testCreateApprovedJob(t *testing.T) {
	ctx := context.Background()
	caps := store.JobCaps{Total: 20, PerThread: 3}

	t.Run("TheJobIsLinkedInTheSameTransaction", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		ap := executing(t, s, "t1", "make test")
		j, err := s.CreateApprovedJob(ctx, ap.ID, approvedJob(ap), caps)
		if err != nil {
			t.Fatal(err)
		}
		if j.Status != store.JobRunning || j.Command != "make test" || j.LogPath != fmt.Sprintf("/state/jobs/%d.log", j.ID) {
			t.Fatalf("job %+v", j)
		}
		got, err := s.Approval(ctx, ap.ID)
		if err != nil || got.JobID != j.ID || got.Status != store.ApprovalExecuting {
			t.Fatalf("approval %+v, %v; want executing with job %d", got, err, j.ID)
		}
	})

	t.Run("TheFourthJobInAThreadIsRefused", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		for range 3 {
			if _, err := s.CreateJob(ctx, newJob("t1"), caps); err != nil {
				t.Fatal(err)
			}
		}
		ap := executing(t, s, "t1", "make test")
		if _, err := s.CreateApprovedJob(ctx, ap.ID, approvedJob(ap), caps); !errors.Is(err, store.ErrThreadJobCapReached) {
			t.Fatalf("fourth in thread: %v, want ErrThreadJobCapReached", err)
		}
		if got, _ := s.Approval(ctx, ap.ID); got.JobID != 0 || got.Status != store.ApprovalExecuting {
			t.Fatalf("approval after the refusal %+v; want executing without a job", got)
		}
		if jobs, _ := s.ListJobs(ctx, ""); len(jobs) != 3 {
			t.Fatalf("%d jobs, want 3", len(jobs))
		}
	})

	t.Run("TheTwentyFirstRunningJobIsRefused", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		var first store.Job
		for i := range 20 {
			j, err := s.CreateJob(ctx, newJob(fmt.Sprintf("other-%d", i)), caps)
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				first = j
			}
		}
		ap := executing(t, s, "t1", "make test")
		if _, err := s.CreateApprovedJob(ctx, ap.ID, approvedJob(ap), caps); !errors.Is(err, store.ErrJobCapReached) {
			t.Fatalf("21st job: %v, want ErrJobCapReached", err)
		}
		if _, _, err := s.FinishJob(ctx, first.ID, store.JobResult{Outcome: "success"}, cont(first.ID)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateApprovedJob(ctx, ap.ID, approvedJob(ap), caps); err != nil {
			t.Fatalf("after a finish the slot is free: %v", err)
		}
	})

	t.Run("OnlyAnExecutingApprovalWithoutAJobGetsOne", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		pending := save(t, s, newApproval("t1", "pending"))
		if _, err := s.CreateApprovedJob(ctx, pending.ID, approvedJob(pending), caps); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("job for a pending approval: %v, want ErrConflict", err)
		}
		denied := save(t, s, newApproval("t1", "denied"))
		if _, err := s.DenyApproval(ctx, denied.ID, "bob", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateApprovedJob(ctx, denied.ID, approvedJob(denied), caps); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("job for a denied approval: %v, want ErrConflict", err)
		}
		ap := executing(t, s, "t1", "make test")
		if _, err := s.CreateApprovedJob(ctx, ap.ID, approvedJob(ap), caps); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateApprovedJob(ctx, ap.ID, approvedJob(ap), caps); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("second job for one approval: %v, want ErrConflict", err)
		}
		if jobs, _ := s.ListJobs(ctx, ""); len(jobs) != 1 {
			t.Fatalf("%d jobs, want 1", len(jobs))
		}
	})

	t.Run("TheJobMustRunWhatWasApproved", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		ap := executing(t, s, "t1", "make test")
		for name, change := range map[string]func(*store.NewJob){
			"command": func(j *store.NewJob) { j.Command = "rm -rf /" },
			"kind":    func(j *store.NewJob) { j.Kind = "agent" },
			"channel": func(j *store.NewJob) { j.Channel = "other" },
			"thread":  func(j *store.NewJob) { j.Thread = "t2" },
			"author":  func(j *store.NewJob) { j.Author = "@mallory" },
			"ceiling": func(j *store.NewJob) { j.Ceiling = 2 * time.Hour },
			"noLog":   func(j *store.NewJob) { j.LogDir = "" },
		} {
			j := approvedJob(ap)
			change(&j)
			if _, err := s.CreateApprovedJob(ctx, ap.ID, j, caps); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("%s: %v, want ErrInvalid", name, err)
			}
		}
		if got, _ := s.Approval(ctx, ap.ID); got.JobID != 0 {
			t.Fatalf("approval linked to job %d", got.JobID)
		}
	})
}

func (cf conformance) testSettleApproval(t *testing.T) {
	ctx := context.Background()
	caps := store.JobCaps{}

	t.Run("ConsumedNeedsItsJob", func(t *testing.T) {
		clk := &clock{t: t0}
		s := cf.open(t, nil, clk)
		ap := executing(t, s, "t1", "make test")
		if _, err := s.SettleApproval(ctx, ap.ID, store.ApprovalConsumed, ""); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("consumed without a job: %v, want ErrConflict", err)
		}
		j, err := s.CreateApprovedJob(ctx, ap.ID, approvedJob(ap), caps)
		if err != nil {
			t.Fatal(err)
		}
		clk.Set(t0.Add(time.Second))
		got, err := s.SettleApproval(ctx, ap.ID, store.ApprovalConsumed, "")
		if err != nil || got.Status != store.ApprovalConsumed || got.JobID != j.ID || !got.SettledAt.Equal(t0.Add(time.Second)) {
			t.Fatalf("settled %+v, %v", got, err)
		}
		for _, to := range []store.ApprovalStatus{store.ApprovalConsumed, store.ApprovalFailed} {
			if _, err := s.SettleApproval(ctx, ap.ID, to, ""); !errors.Is(err, store.ErrConflict) {
				t.Errorf("settle %s replay: %v, want ErrConflict", to, err)
			}
		}
		want := []string{
			fmt.Sprintf(`approval.approve admin {"approval":%d}`, ap.ID),
			fmt.Sprintf(`approval.consume primary {"approval":%d,"job":%d}`, ap.ID, j.ID),
		}
		if got := auditOf(t, s, ap.ID); !reflect.DeepEqual(got, want) {
			t.Fatalf("audit %q, want %q", got, want)
		}
	})

	t.Run("FailedKeepsWhy", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		ap := executing(t, s, "t1", "make test")
		got, err := s.SettleApproval(ctx, ap.ID, store.ApprovalFailed, "the workdir changed")
		if err != nil || got.Status != store.ApprovalFailed || got.Note != "the workdir changed" || got.SettledAt.IsZero() {
			t.Fatalf("settled %+v, %v", got, err)
		}
		if _, err := s.CreateApprovedJob(ctx, ap.ID, approvedJob(ap), caps); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("job after failing: %v, want ErrConflict", err)
		}
		want := []string{
			fmt.Sprintf(`approval.approve admin {"approval":%d}`, ap.ID),
			fmt.Sprintf(`approval.fail primary {"approval":%d,"note":"the workdir changed"}`, ap.ID),
		}
		if got := auditOf(t, s, ap.ID); !reflect.DeepEqual(got, want) {
			t.Fatalf("audit %q, want %q", got, want)
		}
	})

	t.Run("APendingApprovalCannotBeSettled", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		ap := save(t, s, newApproval("t1", "make test"))
		if _, err := s.SettleApproval(ctx, ap.ID, store.ApprovalFailed, ""); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("settle pending: %v, want ErrConflict", err)
		}
		if got := auditOf(t, s, ap.ID); len(got) != 0 {
			t.Fatalf("audit %q after a refused settle", got)
		}
	})
}

func (cf conformance) testRecoverApprovals(t *testing.T) {
	ctx := context.Background()
	dir := cf.newHarness(t)
	clk := &clock{t: t0}
	s := cf.open(t, dir, clk)
	withJob := executing(t, s, "t1", "with job")
	j, err := s.CreateApprovedJob(ctx, withJob.ID, approvedJob(withJob), store.JobCaps{})
	if err != nil {
		t.Fatal(err)
	}
	withoutJob := executing(t, s, "t1", "without job")
	pending := save(t, s, newApproval("t1", "pending"))
	denied := save(t, s, newApproval("t1", "denied"))
	if denied, err = s.DenyApproval(ctx, denied.ID, "bob", "no"); err != nil {
		t.Fatal(err)
	}

	// The restart: a new store on the same file.
	clk.Set(t0.Add(time.Hour))
	s = cf.open(t, dir, clk)
	settled, err := s.RecoverApprovals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	consumed := withJob
	consumed.Status, consumed.JobID, consumed.SettledAt = store.ApprovalConsumed, j.ID, t0.Add(time.Hour)
	failed := withoutJob
	failed.Status, failed.Note, failed.SettledAt = store.ApprovalFailed, store.ApprovalRestartNote, t0.Add(time.Hour)
	if want := []store.Approval{consumed, failed}; !reflect.DeepEqual(settled, want) {
		t.Fatalf("settled %+v\nwant %+v", settled, want)
	}
	for _, want := range []store.Approval{consumed, failed, pending, denied} {
		if got, err := s.Approval(ctx, want.ID); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("approval %d = %+v, %v; want %+v", want.ID, got, err, want)
		}
	}
	if got, want := auditOf(t, s, withJob.ID)[1], fmt.Sprintf(`approval.consume primary {"approval":%d,"job":%d}`, withJob.ID, j.ID); got != want {
		t.Errorf("audit %q, want %q", got, want)
	}
	if got, want := auditOf(t, s, withoutJob.ID)[1], fmt.Sprintf(`approval.fail primary {"approval":%d,"note":%q}`, withoutJob.ID, store.ApprovalRestartNote); got != want {
		t.Errorf("audit %q, want %q", got, want)
	}
	if job, err := s.Job(ctx, j.ID); err != nil || job.Status != store.JobRunning {
		t.Errorf("the job was touched: %+v, %v", job, err)
	}

	t.Run("ASecondRecoveryChangesNothing", func(t *testing.T) {
		before, _ := s.ListAudit(ctx, store.AuditFilter{})
		again, err := s.RecoverApprovals(ctx)
		if err != nil || len(again) != 0 {
			t.Fatalf("second recovery settled %+v, %v", again, err)
		}
		if after, _ := s.ListAudit(ctx, store.AuditFilter{}); len(after) != len(before) {
			t.Fatalf("audit grew from %d to %d entries", len(before), len(after))
		}
	})
}
