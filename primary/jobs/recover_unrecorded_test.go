package jobs

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/jobproc"
	"github.com/turncli/turncli/primary/store"
)

// recordUnlaunched records a job as Start does before it launches the process: a primary
// killed right then leaves exactly this record, without a process.
func recordUnlaunched(t *testing.T, e *testEnv, kind, command string) store.Job {
	t.Helper()
	rec, err := e.s.CreateJob(context.Background(), store.NewJob{Kind: kind, Command: command, Channel: "room",
		Thread: "t1", Workspace: t.TempDir(), Ceiling: time.Hour, LogDir: e.m.LogDir()}, store.JobCaps{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(e.m.LogDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	return rec
}

// launchAsKilledPrimary starts rec's process as startLocal does, from a primary killed before
// it recorded the pid: nothing but the process's own files names it. The test reaps it.
func launchAsKilledPrimary(t *testing.T, e *testEnv, rec store.Job) {
	t.Helper()
	p, err := jobproc.Launch(jobproc.Spec{
		Bash: e.m.cfg.BashPath, Command: rec.Command, Dir: rec.Workspace,
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.dir}, LogPath: rec.LogPath,
		StatusPath: e.m.statusPath(rec.ID), IdentityPath: e.m.identityPath(rec.ID),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Reap() })
}

// recoverAsync runs Recover, which may wait for processes to name themselves.
func recoverAsync(t *testing.T, e *testEnv) <-chan error {
	done := make(chan error, 1)
	go func() { done <- e.m.Recover(context.Background()) }()
	return done
}

func awaitRecover(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitBound):
		t.Fatal("Recover did not return")
	}
}

// TestRecoverJobsWhoseProcessWasNotRecorded: the primary died between committing a job and
// recording its process. The next one names the process by its identity file, supervises it
// (cancel and the ceiling reach it) and reports its real exit; a launch that never produced a
// process is given up, and its command never runs.
func TestRecoverJobsWhoseProcessWasNotRecorded(t *testing.T) {
	ctx := context.Background()
	t.Run("AProcessNamingItselfDuringTheWaitIsSupervisedToItsRealExit", func(t *testing.T) {
		e := newEnv(t, func(c *Config) { c.StartWait = waitBound })
		gate, runs := filepath.Join(e.dir, "gate"), filepath.Join(e.dir, "runs")
		rec := recordUnlaunched(t, e, "command", "echo run >> "+runs+"; while [ ! -e "+gate+" ]; do sleep 0.02; done; echo done; exit 5")
		done := recoverAsync(t, e)
		time.Sleep(50 * time.Millisecond) // Recover waits; the process starts late
		launchAsKilledPrimary(t, e, rec)
		awaitRecover(t, done)
		j, _ := e.m.Get(ctx, rec.ID)
		if j.Status != store.JobRunning || j.Pid == 0 || j.ProcStart == 0 {
			t.Fatalf("job after Recover: %s (%q), pid %d start %d; want it running with its process recorded", j.Status, j.Outcome, j.Pid, j.ProcStart)
		}
		if err := os.WriteFile(gate, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		j = e.finished(t, rec.ID)
		if j.Outcome != "failed (exit 5)" || deref(j.ExitCode) != 5 || !strings.Contains(j.Tail, "done") {
			t.Fatalf("outcome %q exit %v tail %q; want its real exit", j.Outcome, deref(j.ExitCode), j.Tail)
		}
		if b, _ := os.ReadFile(runs); string(b) != "run\n" {
			t.Errorf("the command ran %q, want once", b)
		}
		if cs := e.continuations(t, rec.ID); len(cs) != 1 {
			t.Errorf("%d continuations, want 1", len(cs))
		}
	})
	t.Run("CancelReachesAProcessNamedByItsIdentity", func(t *testing.T) {
		e := newEnv(t, nil)
		rec := recordUnlaunched(t, e, "command", "echo ready; exec sleep 1000")
		launchAsKilledPrimary(t, e, rec)
		if err := e.m.Recover(ctx); err != nil {
			t.Fatal(err)
		}
		// The command must have started: a SIGTERM that comes between the wrapper's identity
		// and its command's start is taken by the wrapper's handler (see jobproc's wrapper),
		// and only the SIGKILL after the grace stops the job then.
		for deadline := time.Now().Add(waitBound); ; time.Sleep(10 * time.Millisecond) {
			if b, _ := os.ReadFile(rec.LogPath); string(b) == "ready\n" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the command never started")
			}
		}
		if err := e.m.Cancel(ctx, rec.ID); err != nil {
			t.Fatalf("Cancel: %v", err)
		}
		if j := e.finished(t, rec.ID); j.Outcome != OutcomeCancelled || deref(j.ExitCode) != 143 {
			t.Fatalf("outcome %q exit %v; want cancelled by SIGTERM", j.Outcome, deref(j.ExitCode))
		}
	})
	t.Run("AProcessThatEndedWhileThePrimaryWasDownKeepsItsExitStatusAndOutput", func(t *testing.T) {
		e := newEnv(t, nil)
		rec := recordUnlaunched(t, e, "command", "echo its-output; exit 3")
		launchAsKilledPrimary(t, e, rec)
		// Ended means its status is written and its process gone: a process still exiting
		// after writing its status is alive, and Recover rightly re-attaches to it.
		ended := func() bool {
			if _, ok := jobproc.ReadStatus(e.m.statusPath(rec.ID)); !ok {
				return false
			}
			id, st := jobproc.ReadIdentity(e.m.identityPath(rec.ID))
			return st == jobproc.IdentityWritten && !jobproc.Alive(id.Pid, id.Start)
		}
		deadline := time.Now().Add(waitBound)
		for !ended() {
			if time.Now().After(deadline) {
				t.Fatal("the job did not end")
			}
			time.Sleep(5 * time.Millisecond)
		}
		if err := e.m.Recover(ctx); err != nil {
			t.Fatal(err)
		}
		j, _ := e.m.Get(ctx, rec.ID)
		if j.Status != store.JobFinished || j.Outcome != "failed (exit 3)" || deref(j.ExitCode) != 3 || !strings.Contains(j.Tail, "its-output") {
			t.Fatalf("job: %s %q exit %v tail %q; want its real outcome and output", j.Status, j.Outcome, deref(j.ExitCode), j.Tail)
		}
	})
	t.Run("ALaunchThatNeverStartedIsGivenUpAndNeverRuns", func(t *testing.T) {
		e := newEnv(t, func(c *Config) { c.StartWait = 20 * time.Millisecond })
		runs := filepath.Join(e.dir, "runs")
		rec := recordUnlaunched(t, e, "command", "echo run >> "+runs)
		if err := e.m.Recover(ctx); err != nil {
			t.Fatal(err)
		}
		j, _ := e.m.Get(ctx, rec.ID)
		if j.Status != store.JobFinished || j.Outcome != OutcomeNeverStarted || j.ExitCode != nil {
			t.Fatalf("job: %s %q exit %v; want never started", j.Status, j.Outcome, deref(j.ExitCode))
		}
		if cs := e.continuations(t, rec.ID); len(cs) != 1 || !strings.Contains(cs[0].Text, OutcomeNeverStarted) {
			t.Fatalf("continuations: %v", cs)
		}
		// Its process, were it only now getting to run, finds the launch given up.
		launchAsKilledPrimary(t, e, rec)
		time.Sleep(100 * time.Millisecond)
		if _, err := os.Stat(runs); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the given-up job's command ran (%v)", err)
		}
		if err := e.m.Recover(ctx); err != nil {
			t.Fatal(err)
		}
		if cs := e.continuations(t, rec.ID); len(cs) != 1 {
			t.Errorf("%d continuations after a second Recover, want 1", len(cs))
		}
	})
	t.Run("AnAgentNamedByItsIdentityIsStoppedAndInterrupted", func(t *testing.T) {
		e := newEnv(t, nil)
		rec := recordUnlaunched(t, e, "agent", "echo ready; exec sleep 1000")
		launchAsKilledPrimary(t, e, rec)
		if err := e.m.Recover(ctx); err != nil {
			t.Fatal(err)
		}
		if j, _ := e.m.Get(ctx, rec.ID); j.Status != store.JobFinished || j.Outcome != OutcomeInterrupted {
			t.Fatalf("agent: %s %q; want interrupted", j.Status, j.Outcome)
		}
		id, st := jobproc.ReadIdentity(e.m.identityPath(rec.ID))
		if st != jobproc.IdentityWritten {
			t.Fatalf("identity: %v", st)
		}
		deadline := time.Now().Add(waitBound)
		for jobproc.Alive(id.Pid, id.Start) {
			if time.Now().After(deadline) {
				t.Fatal("the interrupted agent's process runs on")
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}
