package e2e

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/worker"
)

// TestCancelOfAWorkerJobWhileItsWorkerIsAwayIsSentWhenItReturns: the cancel is saved, the
// worker comes back (same state, its job still running), and the job ends cancelled.
func TestCancelOfAWorkerJobWhileItsWorkerIsAwayIsSentWhenItReturns(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	w := env.StartWorker(t, "key-a", "w1")
	id, err := env.Primary.Internals().Jobs.Start(ctx, jobs.JobSpec{Kind: "command", Command: "echo started; sleep 60", Channel: "!room", Thread: "$t",
		Agent: "tester", WorkerKey: "key-a"})
	if err != nil {
		t.Fatal(err)
	}
	poll := func(what string, done func(jobs.Job) bool) jobs.Job {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			j, err := env.Primary.Internals().Jobs.Get(ctx, id)
			if err == nil && done(j) {
				return j
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %d never %s: %+v %v", id, what, j, err)
			}
		}
	}
	// Its output shows the worker has launched and recorded it, not only been asked to.
	poll("ran on the worker", func(j jobs.Job) bool {
		out, _ := os.ReadFile(j.LogPath)
		return j.WorkerID == "w1" && strings.Contains(string(out), "started")
	})
	if err := w.Stop(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); len(env.Primary.Internals().Workers.Workers()) > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the primary still sees the stopped worker")
		}
	}
	if err := env.Primary.Internals().Jobs.Cancel(ctx, id); err != nil {
		t.Fatalf("cancel while the worker is away: %v", err)
	}
	if j := poll("saved its cancel", func(j jobs.Job) bool { return j.CancelRequested }); j.Status != store.JobRunning {
		t.Fatalf("job ended before its worker came back: %q", j.Outcome)
	}
	env.StartWorker(t, "key-a", "w1", func(c *worker.Config) { c.StateDir = w.StateDir })
	if j := poll("finished", func(j jobs.Job) bool { return j.Status == store.JobFinished }); j.Outcome != jobs.OutcomeCancelled {
		t.Fatalf("outcome %q, want %q", j.Outcome, jobs.OutcomeCancelled)
	}
}
