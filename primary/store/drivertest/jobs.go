package drivertest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/turncli/turncli/primary/store"
)

func newJob(thread string) store.NewJob {
	return store.NewJob{Kind: "command", Command: "true", Channel: "room", Thread: thread,
		Workspace: "/tmp", Ceiling: time.Hour, LogDir: "/state/jobs"}
}

func (cf conformance) testJobs(t *testing.T) {
	ctx := context.Background()
	caps := store.JobCaps{Total: 3, PerThread: 2}

	t.Run("CapsAreCountedAgainstRunningJobsInTheSameTransaction", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		a, err := s.CreateJob(ctx, newJob("t1"), caps)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateJob(ctx, newJob("t1"), caps); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateJob(ctx, newJob("t1"), caps); !errors.Is(err, store.ErrThreadJobCapReached) {
			t.Fatalf("third in thread: err = %v, want ErrThreadJobCapReached", err)
		}
		if _, err := s.CreateJob(ctx, newJob("t2"), caps); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateJob(ctx, newJob("t3"), caps); !errors.Is(err, store.ErrJobCapReached) {
			t.Fatalf("fourth overall: err = %v, want ErrJobCapReached", err)
		}
		if _, _, err := s.FinishJob(ctx, a.ID, store.JobResult{Outcome: "success"}, cont(a.ID)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateJob(ctx, newJob("t1"), caps); err != nil {
			t.Fatalf("after a finish the slot is free: %v", err)
		}
	})

	t.Run("FinishTwiceKeepsFirstResultAndOneContinuation", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		j, err := s.CreateJob(ctx, newJob("t1"), caps)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetJobProcess(ctx, j.ID, 42, 777); err != nil {
			t.Fatal(err)
		}
		code := 0
		finished, created, err := s.FinishJob(ctx, j.ID, store.JobResult{Outcome: "success", ExitCode: &code, Tail: "ok"}, cont(j.ID))
		if err != nil || !finished || !created {
			t.Fatalf("first finish = %v, %v, %v", finished, created, err)
		}
		finished, created, err = s.FinishJob(ctx, j.ID, store.JobResult{Outcome: "other"}, cont(j.ID))
		if err != nil || finished || created {
			t.Fatalf("second finish = %v, %v, %v; want false, false, nil", finished, created, err)
		}
		got, err := s.Job(ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != store.JobFinished || got.Outcome != "success" || got.ExitCode == nil || *got.ExitCode != 0 ||
			got.Tail != "ok" || got.LogPath != fmt.Sprintf("/state/jobs/%d.log", j.ID) || got.Pid != 42 || got.ProcStart != 777 || got.EndedAt.IsZero() {
			t.Fatalf("job = %+v", got)
		}
		pending, err := s.PendingContinuations(ctx, 0, 10)
		if err != nil || len(pending) != 1 {
			t.Fatalf("pending = %v, %v; want one", pending, err)
		}
		if _, _, err := s.FinishJob(ctx, 999, store.JobResult{Outcome: "x"}, cont(999)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown job: err = %v", err)
		}
		// The unknown job's continuation, queued before its end was refused, is not kept.
		if pending, err := s.PendingContinuations(ctx, 0, 10); err != nil || len(pending) != 1 || pending[0].IdempotencyKey != cont(j.ID).IdempotencyKey {
			t.Fatalf("pending after an unknown job's end = %v, %v; want only job %d's", pending, err, j.ID)
		}
		if err := s.SetJobProcess(ctx, j.ID, 1, 1); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("process of a finished job: err = %v", err)
		}
	})

	t.Run("WorkerIsRecordedOnlyOnRunningJobs", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		nj := newJob("t1")
		nj.WorkerKey = "key-a"
		j, err := s.CreateJob(ctx, nj, caps)
		if err != nil || j.WorkerKey != "key-a" || j.WorkerID != "" {
			t.Fatalf("created %+v, %v", j, err)
		}
		if err := s.SetJobWorker(ctx, j.ID, ""); !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("empty worker id: %v, want ErrInvalid", err)
		}
		if err := s.SetJobWorker(ctx, j.ID, "worker-1"); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Job(ctx, j.ID); err != nil || got.WorkerKey != "key-a" || got.WorkerID != "worker-1" {
			t.Fatalf("job %+v, %v", got, err)
		}
		if _, _, err := s.FinishJob(ctx, j.ID, store.JobResult{Outcome: "success"}, cont(j.ID)); err != nil {
			t.Fatal(err)
		}
		if err := s.SetJobWorker(ctx, j.ID, "worker-2"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("worker of a finished job: %v, want ErrNotFound", err)
		}
		if err := s.SetJobWorker(ctx, 999, "worker-2"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("worker of an unknown job: %v, want ErrNotFound", err)
		}
		if got, _ := s.Job(ctx, j.ID); got.WorkerID != "worker-1" {
			t.Fatalf("worker id %q after refused changes", got.WorkerID)
		}
	})

	t.Run("ListJobsFiltersByStatusNewestFirst", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		a, _ := s.CreateJob(ctx, newJob("t1"), caps)
		b, _ := s.CreateJob(ctx, newJob("t2"), caps)
		if _, _, err := s.FinishJob(ctx, a.ID, store.JobResult{Outcome: "success"}, cont(a.ID)); err != nil {
			t.Fatal(err)
		}
		running, err := s.ListJobs(ctx, store.JobRunning)
		if err != nil || len(running) != 1 || running[0].ID != b.ID {
			t.Fatalf("running = %v, %v", running, err)
		}
		all, err := s.ListJobs(ctx, "")
		if err != nil || len(all) != 2 || all[0].ID != b.ID {
			t.Fatalf("all = %v, %v", all, err)
		}
	})
}

func cont(id int64) store.NewContinuation {
	return store.NewContinuation{IdempotencyKey: fmt.Sprintf("job:%d", id), Channel: "room", Text: "done"}
}
