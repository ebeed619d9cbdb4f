package jobs

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/turncli/turncli/internal/sandbox"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/clock/clocktest"
	"github.com/turncli/turncli/internal/jobproc"
	"github.com/turncli/turncli/primary/events"
	"github.com/turncli/turncli/primary/secrets"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/memory"
)

// waitBound is how long a test waits for a job to finish before failing.
const waitBound = 20 * time.Second

type testEnv struct {
	m     *Manager
	s     *memory.Store
	dir   string
	notes chan struct{}
}

type tLogWriter struct{ t *testing.T }

func (w tLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// unisolated runs the manager's jobs as the shell user, without sandboxes: these tests are of
// the manager's bookkeeping; sandboxed jobs are tested end to end (primary/e2e).
type unisolated struct{}

func (unisolated) JobSandbox(string, string, string) (*sandbox.Job, error) { return nil, nil }

func newEnv(t *testing.T, mutate func(*Config)) *testEnv {
	t.Helper()
	dir := t.TempDir()
	// The manager's bookkeeping is under test, not the database: the in-memory store.
	s := memory.Open(memory.Options{})
	t.Cleanup(func() { s.Close() })
	e := &testEnv{s: s, dir: dir, notes: make(chan struct{}, 256)}
	cfg := Config{
		Store: s, StateDir: dir, Poll: 5 * time.Millisecond, Settings: Settings{Grace: 300 * time.Millisecond},
		Notify: func() {
			select {
			case e.notes <- struct{}{}:
			default:
			}
		},
		Logger:    slog.New(slog.NewTextHandler(tLogWriter{t}, nil)),
		Sandboxes: unisolated{},
	}
	if mutate != nil {
		mutate(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	e.m = m
	return e
}

// spec is a command job in a fresh workspace with only PATH set.
func (e *testEnv) spec(t *testing.T, command string) JobSpec {
	return JobSpec{Kind: "command", Command: command, Label: "build", Channel: "room", Thread: "t1",
		Workspace: t.TempDir(), Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.dir}}
}

func (e *testEnv) start(t *testing.T, spec JobSpec) int64 {
	t.Helper()
	id, err := e.m.Start(context.Background(), spec)
	if err != nil {
		t.Fatalf("Start(%q): %v", spec.Command, err)
	}
	return id
}

// awaitNotify waits for one continuation notification.
func (e *testEnv) awaitNotify(t *testing.T) {
	t.Helper()
	select {
	case <-e.notes:
	case <-time.After(waitBound):
		t.Fatal("no job finished")
	}
}

// finished waits for the job's continuation and returns the job.
func (e *testEnv) finished(t *testing.T, id int64) Job {
	t.Helper()
	e.awaitNotify(t)
	j, err := e.m.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != store.JobFinished {
		t.Fatalf("job %d is %s after its notification", id, j.Status)
	}
	return j
}

func (e *testEnv) continuations(t *testing.T, id int64) []store.Continuation {
	t.Helper()
	all, err := e.s.PendingContinuations(context.Background(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []store.Continuation
	for _, c := range all {
		if c.IdempotencyKey == "job:"+strconv.FormatInt(id, 10) {
			out = append(out, c)
		}
	}
	return out
}

func TestCaps(t *testing.T) {
	t.Run("TwentiethJobStartsTwentyFirstIsRefusedThirdPerThreadStartsFourthIsRefused", func(t *testing.T) {
		e := newEnv(t, nil)
		var ids []int64
		for i := range 3 {
			ids = append(ids, e.start(t, e.spec(t, "sleep 30")))
			_ = i
		}
		_, err := e.m.Start(context.Background(), e.spec(t, "sleep 30"))
		if !errors.Is(err, ErrCapReached) || !errors.Is(err, store.ErrThreadJobCapReached) {
			t.Fatalf("4th in the thread: err = %v, want the thread cap", err)
		}
		for i := 3; i < 20; i++ {
			s := e.spec(t, "sleep 30")
			s.Thread = fmt.Sprintf("other-%d", i)
			ids = append(ids, e.start(t, s))
		}
		s := e.spec(t, "sleep 30")
		s.Thread = "fresh"
		if _, err := e.m.Start(context.Background(), s); !errors.Is(err, ErrCapReached) || !errors.Is(err, store.ErrJobCapReached) {
			t.Fatalf("21st: err = %v, want the global cap", err)
		}
		if err := e.m.Cancel(context.Background(), ids[0]); err != nil {
			t.Fatal(err)
		}
		if j := e.finished(t, ids[0]); j.Outcome != OutcomeCancelled {
			t.Fatalf("cancelled job outcome = %q", j.Outcome)
		}
		ids[0] = e.start(t, e.spec(t, "sleep 30")) // a finished job frees its slot in the thread and in all
		for _, id := range ids {
			if err := e.m.Cancel(context.Background(), id); err != nil {
				t.Fatal(err)
			}
		}
		for range ids {
			e.awaitNotify(t)
		}
	})
}

func TestOutcomes(t *testing.T) {
	tests := []struct {
		name, command, outcome string
		exit                   *int
		missingWorkspace       bool
	}{
		{name: "ExitZeroIsSuccess", command: "echo hi", outcome: "success", exit: ptr(0)},
		{name: "ExitOneIsAGeneralError", command: "exit 1", outcome: "failed with a general error (exit 1)", exit: ptr(1)},
		{name: "ExitTwoIsAFailureThatMayBeAUsageError", command: "exit 2", outcome: "failed, often a usage error or rejected input (exit 2)", exit: ptr(2)},
		{name: "AProgramsOwnExitTwoIsNotCalledRejectedInput", command: "grep -q x /no/such/file", outcome: "failed, often a usage error or rejected input (exit 2)", exit: ptr(2)},
		{name: "ExitOneTwentySixIsNotExecutable", command: "printf 'echo x' > s.sh; chmod 600 s.sh; ./s.sh", outcome: "not executable (exit 126)", exit: ptr(126)},
		{name: "ExitOneTwentySevenIsCommandNotFound", command: "no-such-command-turncli", outcome: "command not found (exit 127)", exit: ptr(127)},
		{name: "KilledBySignalIsStoppedBySignal", command: "kill -USR1 $$", outcome: "stopped by signal 10 (user defined signal 1)", exit: ptr(138)},
		{name: "OtherExitCodeIsAFailure", command: "exit 3", outcome: "failed (exit 3)", exit: ptr(3)},
		{name: "MissingWorkspaceCouldNotStart", command: "true", outcome: "could not start: the workspace", missingWorkspace: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, nil)
			spec := e.spec(t, tt.command)
			if tt.missingWorkspace {
				spec.Workspace = filepath.Join(spec.Workspace, "gone")
			}
			id := e.start(t, spec)
			j := e.finished(t, id)
			// A start error's reason follows the fixed text; every other outcome is exact.
			if got := j.Outcome; tt.missingWorkspace && !strings.HasPrefix(got, tt.outcome) || !tt.missingWorkspace && got != tt.outcome {
				t.Errorf("outcome = %q, want %q", got, tt.outcome)
			}
			if (j.ExitCode == nil) != (tt.exit == nil) || (j.ExitCode != nil && *j.ExitCode != *tt.exit) {
				t.Errorf("exit code = %v, want %v", deref(j.ExitCode), deref(tt.exit))
			}
			cs := e.continuations(t, id)
			if len(cs) != 1 {
				t.Fatalf("%d continuations, want 1", len(cs))
			}
			text := cs[0].Text
			for _, want := range []string{`"build"`, fmt.Sprintf("job %d", id), j.Outcome, "Runtime:", "Continue only if this confirms success", "do not re-launch the same job"} {
				if !strings.Contains(text, want) {
					t.Errorf("continuation %q lacks %q", text, want)
				}
			}
			if cs[0].Channel != "room" || cs[0].Thread != "t1" {
				t.Errorf("continuation for %s/%s, want room/t1", cs[0].Channel, cs[0].Thread)
			}
		})
	}
}

func ptr(i int) *int { return &i }

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestOutput(t *testing.T) {
	t.Run("TailIsExactlyTheLastSixThousandCharactersAndTheLogIsComplete", func(t *testing.T) {
		e := newEnv(t, nil)
		id := e.start(t, e.spec(t, "seq 1 5000; seq 1 3000 >&2"))
		j := e.finished(t, id)
		var want strings.Builder
		for i := 1; i <= 5000; i++ {
			fmt.Fprintf(&want, "%d\n", i)
		}
		for i := 1; i <= 3000; i++ {
			fmt.Fprintf(&want, "%d\n", i)
		}
		log, err := os.ReadFile(j.LogPath)
		if err != nil {
			t.Fatal(err)
		}
		if string(log) != want.String() {
			t.Fatalf("log has %d bytes, want %d", len(log), want.Len())
		}
		w := want.String()
		if j.Tail != w[len(w)-jobproc.TailChars:] {
			t.Fatalf("tail has %d chars and differs from the last %d of the output", len(j.Tail), jobproc.TailChars)
		}
		fi, err := os.Stat(j.LogPath)
		if err != nil || fi.Mode().Perm() != 0o600 || j.LogPath != filepath.Join(e.dir, "jobs", strconv.FormatInt(id, 10)+".log") {
			t.Fatalf("log %s mode %v, %v", j.LogPath, fi.Mode(), err)
		}
		cs := e.continuations(t, id)
		if len(cs) != 1 || !strings.Contains(cs[0].Text, j.Tail) {
			t.Fatal("the continuation does not hold the tail")
		}
	})
	t.Run("TailCountsCharactersNotBytes", func(t *testing.T) {
		e := newEnv(t, nil)
		id := e.start(t, e.spec(t, "printf 'x'; for i in $(seq 7000); do printf 'é'; done"))
		j := e.finished(t, id)
		if j.Tail != strings.Repeat("é", jobproc.TailChars) {
			t.Fatalf("tail = %d runes starting %q", len([]rune(j.Tail)), j.Tail[:10])
		}
	})
	t.Run("EnvironmentIsExactlyWhatWasGiven", func(t *testing.T) {
		t.Setenv("TURNCLI_JOBS_SENTINEL", "leaked")
		e := newEnv(t, nil)
		spec := e.spec(t, "env")
		spec.Env = append(spec.Env, "FOO=bar baz")
		j := e.finished(t, e.start(t, spec))
		got := map[string]string{}
		for line := range strings.Lines(readFile(t, j.LogPath)) {
			k, v, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "=")
			got[k] = v
		}
		// bash itself adds PWD, SHLVL and _; a login shell's /etc/profile may reset PATH.
		for _, kv := range spec.Env {
			k, v, _ := strings.Cut(kv, "=")
			if k != "PATH" && got[k] != v {
				t.Errorf("%s = %q, want %q", k, got[k], v)
			}
		}
		for k := range got {
			if !slices.Contains([]string{"PATH", "HOME", "FOO", "PWD", "SHLVL", "_"}, k) {
				t.Errorf("unexpected variable %s=%q", k, got[k])
			}
		}
		if got["PWD"] != spec.Workspace {
			t.Errorf("PWD = %q, want the workspace %q", got["PWD"], spec.Workspace)
		}
	})
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCeiling(t *testing.T) {
	t.Run("TermIgnoringJobGetsTermThenKillAndStopsAtTheTimeLimit", func(t *testing.T) {
		e := newEnv(t, nil)
		spec := e.spec(t, "trap 'echo got TERM' TERM; echo started; while :; do sleep 0.05; done")
		spec.Ceiling = 2 * time.Second // long enough for bash to set its trap on a loaded machine
		j := e.finished(t, e.start(t, spec))
		if j.Outcome != OutcomeTimeLimit {
			t.Fatalf("outcome = %q", j.Outcome)
		}
		if j.ExitCode == nil || *j.ExitCode != 128+int(syscall.SIGKILL) {
			t.Fatalf("exit code = %v, want killed by SIGKILL", deref(j.ExitCode))
		}
		if !strings.Contains(readFile(t, j.LogPath), "got TERM") {
			t.Fatal("the job never saw SIGTERM")
		}
	})
	t.Run("CancelStopsARunningJob", func(t *testing.T) {
		e := newEnv(t, nil)
		id := e.start(t, e.spec(t, "sleep 30"))
		if err := e.m.Cancel(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		if j := e.finished(t, id); j.Outcome != OutcomeCancelled {
			t.Fatalf("outcome = %q", j.Outcome)
		}
		if err := e.m.Cancel(context.Background(), id); !errors.Is(err, ErrNotRunning) {
			t.Fatalf("second cancel: err = %v", err)
		}
	})
}

// TestAFinishedJobIsNotCancelledWhileStillTracked: a job stays tracked for a moment after its
// result is saved (its OnEnd runs in that moment); a cancel then must not report success.
func TestAFinishedJobIsNotCancelledWhileStillTracked(t *testing.T) {
	e := newEnv(t, nil)
	spec := e.spec(t, "true")
	cancelled := make(chan error, 1)
	var id atomic.Int64
	spec.OnEnd = func() { cancelled <- e.m.Cancel(context.Background(), id.Load()) }
	id.Store(e.start(t, spec))
	e.finished(t, id.Load())
	select {
	case err := <-cancelled:
		if !errors.Is(err, ErrNotRunning) {
			t.Fatalf("cancel after the result was saved: err = %v, want ErrNotRunning", err)
		}
	case <-time.After(waitBound):
		t.Fatal("OnEnd did not run")
	}
}

func TestFinishTwiceEmitsOneContinuation(t *testing.T) {
	e := newEnv(t, nil)
	id := e.start(t, e.spec(t, "echo done"))
	e.finished(t, id)
	rec, err := e.s.Job(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	e.m.finish(context.Background(), rec, store.JobResult{Outcome: "failed (exit 9)"}, nil)
	if len(e.notes) != 0 {
		t.Fatal("a second finish notified again")
	}
	if cs := e.continuations(t, id); len(cs) != 1 {
		t.Fatalf("%d continuations, want 1", len(cs))
	}
	if j, _ := e.m.Get(context.Background(), id); j.Outcome != OutcomeSuccess {
		t.Fatalf("outcome = %q, the first result must stay", j.Outcome)
	}
}

// recordJob records a running job for a process the test started, as a previous primary would
// have left it.
func recordJob(t *testing.T, e *testEnv, pid int, start uint64) int64 {
	t.Helper()
	rec, err := e.s.CreateJob(context.Background(), store.NewJob{Kind: "command", Command: "previous", Channel: "room",
		Thread: "t1", Workspace: e.dir, Ceiling: time.Hour, LogDir: e.m.LogDir()}, store.JobCaps{})
	if err != nil {
		t.Fatal(err)
	}
	if pid > 0 {
		if err := e.s.SetJobProcess(context.Background(), rec.ID, pid, start); err != nil {
			t.Fatal(err)
		}
	}
	return rec.ID
}

// detached starts a process in its own session that runs until its stdin closes.
func detached(t *testing.T) (*exec.Cmd, io.WriteCloser, uint64) {
	t.Helper()
	cmd := exec.Command("bash", "-c", "read x")
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); _ = cmd.Wait() })
	start, err := jobproc.StartTime(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return cmd, in, start
}

func TestRecover(t *testing.T) {
	ctx := context.Background()
	t.Run("JobOutlivesItsManagerAndTheNextOneReportsItsRealExit", func(t *testing.T) {
		e := newEnv(t, nil)
		gate := filepath.Join(e.dir, "gate")
		id := e.start(t, e.spec(t, "echo before; while [ ! -e "+gate+" ]; do sleep 0.02; done; echo after; exit 3"))
		e.m.Close() // the primary goes away; the job runs on
		next, err := New(e.m.cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(next.Close)
		e.m = next
		if err := next.Recover(ctx); err != nil {
			t.Fatal(err)
		}
		if j, _ := next.Get(ctx, id); j.Status != store.JobRunning {
			t.Fatalf("re-attached job is %s (%s)", j.Status, j.Outcome)
		}
		if err := os.WriteFile(gate, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		j := e.finished(t, id)
		if j.Outcome != "failed (exit 3)" || j.ExitCode == nil || *j.ExitCode != 3 {
			t.Fatalf("outcome = %q, exit %v", j.Outcome, deref(j.ExitCode))
		}
		if !strings.Contains(j.Tail, "before\nafter") {
			t.Fatalf("tail = %q", j.Tail)
		}
		if cs := e.continuations(t, id); len(cs) != 1 {
			t.Fatalf("%d continuations, want 1", len(cs))
		}
	})
	t.Run("JobThatEndedWhileNoPrimaryWatchedKeepsItsRealOutcome", func(t *testing.T) {
		e := newEnv(t, nil)
		gate := filepath.Join(e.dir, "gate")
		id := e.start(t, e.spec(t, "echo before; while [ ! -e "+gate+" ]; do sleep 0.02; done; echo after; exit 3"))
		e.m.Close() // the primary goes away before the job ends, and is back only after
		if err := os.WriteFile(gate, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(waitBound); ; time.Sleep(5 * time.Millisecond) {
			if _, ended := jobproc.ReadStatus(e.m.statusPath(id)); ended {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the job did not end")
			}
		}
		next, err := New(e.m.cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(next.Close)
		e.m = next
		if err := next.Recover(ctx); err != nil {
			t.Fatal(err)
		}
		// Its process may still be exiting after writing its status, and is then re-attached
		// and finishes as watched: either way the recorded outcome must be its own.
		j, _ := next.Get(ctx, id)
		for deadline := time.Now().Add(waitBound); j.Status != store.JobFinished && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			j, _ = next.Get(ctx, id)
		}
		if j.Status != store.JobFinished || j.Outcome != "failed (exit 3)" || deref(j.ExitCode) != 3 || !strings.Contains(j.Tail, "before\nafter") {
			t.Fatalf("job: %s %q exit %v tail %q; want its real outcome and output", j.Status, j.Outcome, deref(j.ExitCode), j.Tail)
		}
		if cs := e.continuations(t, id); len(cs) != 1 || !strings.Contains(cs[0].Text, "failed (exit 3)") {
			t.Fatalf("continuations: %v", cs)
		}
	})
	t.Run("AliveJobIsReattachedAndFinishesWithOneContinuation", func(t *testing.T) {
		e := newEnv(t, nil)
		cmd, in, start := detached(t)
		id := recordJob(t, e, cmd.Process.Pid, start)
		if err := e.m.Recover(ctx); err != nil {
			t.Fatal(err)
		}
		if j, _ := e.m.Get(ctx, id); j.Status != store.JobRunning {
			t.Fatalf("re-attached job is %s", j.Status)
		}
		in.Close() // the job ends
		_ = cmd.Wait()
		j := e.finished(t, id)
		if j.Outcome != OutcomeUnknown || j.ExitCode != nil {
			t.Fatalf("outcome = %q, exit %v", j.Outcome, deref(j.ExitCode))
		}
		if err := e.m.Recover(ctx); err != nil {
			t.Fatal(err)
		}
		if cs := e.continuations(t, id); len(cs) != 1 {
			t.Fatalf("%d continuations, want 1", len(cs))
		}
	})
	t.Run("DeadJobFinishesAsOutcomeUnknown", func(t *testing.T) {
		e := newEnv(t, nil)
		gone := exec.Command("true")
		if err := gone.Run(); err != nil {
			t.Fatal(err)
		}
		id := recordJob(t, e, gone.Process.Pid, 1)
		if err := e.m.Recover(ctx); err != nil {
			t.Fatal(err)
		}
		if j, _ := e.m.Get(ctx, id); j.Status != store.JobFinished || j.Outcome != OutcomeUnknown {
			t.Fatalf("job %d: %s, %q", id, j.Status, j.Outcome)
		}
		if cs := e.continuations(t, id); len(cs) != 1 || !strings.Contains(cs[0].Text, OutcomeUnknown) {
			t.Fatalf("job %d continuations: %v", id, cs)
		}
	})
	t.Run("RecycledPidIsNotSignalledAndTheJobFinishesAsUnknown", func(t *testing.T) {
		e := newEnv(t, func(c *Config) { c.Settings.Grace = time.Millisecond })
		cmd, _, start := detached(t)
		// The recorded job had this pid, but its process started at another time.
		id := recordJob(t, e, cmd.Process.Pid, start+1)
		if err := e.m.Recover(ctx); err != nil {
			t.Fatal(err)
		}
		if j, _ := e.m.Get(ctx, id); j.Status != store.JobFinished || j.Outcome != OutcomeUnknown {
			t.Fatalf("job: %s, %q", j.Status, j.Outcome)
		}
		if !jobproc.Alive(cmd.Process.Pid, start) {
			t.Fatal("the process now holding the pid was stopped")
		}
	})
}

// onlyCalled is a SweepEvery no test advances its clock through: the sweep runs only when a
// test calls it.
const onlyCalled = 100 * 365 * 24 * time.Hour

func TestSweepFinishesWorkerJobsNeverReportedPastTheirCeiling(t *testing.T) {
	ctx := context.Background()
	clk := clocktest.NewFake(time.Now())
	e := newEnv(t, func(c *Config) { c.Clock, c.SweepEvery = clk, onlyCalled })
	record := func(ceiling time.Duration) int64 {
		rec, err := e.s.CreateJob(ctx, store.NewJob{Kind: "command", Command: "remote", Channel: "room", Thread: "t1",
			WorkerKey: "key-a", Ceiling: ceiling, LogDir: e.m.LogDir()}, store.JobCaps{})
		if err != nil {
			t.Fatal(err)
		}
		return rec.ID
	}
	lost, alive := record(time.Minute), record(time.Hour)
	// One minute of ceiling, the grace and the lost-worker margin: lost is overdue, alive not.
	clk.Advance(time.Since(clk.Now()) + time.Minute + e.m.cfg.Settings.Grace + e.m.cfg.LostWorkerAfter + time.Second)
	e.m.sweepLostWorkerJobs(ctx)
	if j, _ := e.m.Get(ctx, lost); j.Status != store.JobFinished || j.Outcome != OutcomeUnknown {
		t.Fatalf("overdue worker job: %s %q", j.Status, j.Outcome)
	}
	if cs := e.continuations(t, lost); len(cs) != 1 {
		t.Fatalf("%d continuations, want 1", len(cs))
	}
	if j, _ := e.m.Get(ctx, alive); j.Status != store.JobRunning {
		t.Fatalf("worker job within its ceiling was finished: %q", j.Outcome)
	}
}

// TestWorkerAgentsUnreportedAfterARestartAreInterrupted: background agents an earlier primary
// started on workers that do not report them within the grace after this primary's start are
// interrupted, once, and free their places under the caps; command jobs and agents of this
// primary are left alone.
func TestWorkerAgentsUnreportedAfterARestartAreInterrupted(t *testing.T) {
	ctx := context.Background()
	boot := time.Now().Add(time.Hour) // this primary starts after the jobs below were recorded
	clk := clocktest.NewFake(boot)
	e := newEnv(t, func(c *Config) { c.Clock, c.SweepEvery = clk, onlyCalled })
	record := func(kind, thread string, created time.Time) int64 {
		rec, err := e.s.CreateJob(ctx, store.NewJob{Kind: kind, Command: "remote", Channel: "room", Thread: thread,
			WorkerKey: "key-a", Ceiling: 7 * 24 * time.Hour, LogDir: e.m.LogDir()}, store.JobCaps{})
		if err != nil {
			t.Fatal(err)
		}
		if rec.CreatedAt.After(created) {
			t.Fatalf("job %d recorded at %v, after %v", rec.ID, rec.CreatedAt, created)
		}
		return rec.ID
	}
	var agents []int64
	for range 3 {
		agents = append(agents, record("agent", "t-cap", boot))
	}
	command := record("command", "t-other", boot)
	if err := e.m.CheckCaps(ctx, "room", "t-cap"); err == nil {
		t.Fatal("three running agents do not fill the thread's places")
	}

	clk.Advance(e.m.cfg.Settings.AgentReportGrace - time.Nanosecond)
	e.m.sweepLostWorkerJobs(ctx)
	if j, _ := e.m.Get(ctx, agents[0]); j.Status != store.JobRunning {
		t.Fatalf("an agent was interrupted within the grace: %q", j.Outcome)
	}

	clk.Advance(time.Nanosecond)
	e.m.sweepLostWorkerJobs(ctx)
	e.m.sweepLostWorkerJobs(ctx) // a second sweep changes nothing
	for _, id := range agents {
		if j, _ := e.m.Get(ctx, id); j.Status != store.JobFinished || j.Outcome != OutcomeInterrupted {
			t.Errorf("agent %d: %s %q, want interrupted", id, j.Status, j.Outcome)
		}
		if cs := e.continuations(t, id); len(cs) != 1 {
			t.Errorf("agent %d: %d continuations, want 1", id, len(cs))
		}
	}
	if err := e.m.CheckCaps(ctx, "room", "t-cap"); err != nil {
		t.Errorf("the interrupted agents still hold their places: %v", err)
	}
	if j, _ := e.m.Get(ctx, command); j.Status != store.JobRunning {
		t.Errorf("a worker command job within its ceiling was finished: %q", j.Outcome)
	}
}

func TestJobChangesArePublished(t *testing.T) {
	bus := events.New()
	feed, stop := bus.Subscribe(16)
	defer stop()
	e := newEnv(t, func(c *Config) { c.Events = bus })
	id := e.start(t, e.spec(t, "echo hi"))
	e.finished(t, id)
	subject := "job/" + strconv.FormatInt(id, 10)
	for _, want := range []string{"job.started", "job.finished"} {
		select {
		case ev := <-feed:
			data, _ := ev.Data.(map[string]any)
			if ev.Kind != want || ev.Subject != subject || data["id"] != id {
				t.Fatalf("event %+v, want %s of %s", ev, want, subject)
			}
			if want == "job.finished" && data["outcome"] != OutcomeSuccess {
				t.Errorf("finished event outcome = %v", data["outcome"])
			}
		case <-time.After(waitBound):
			t.Fatalf("no %s event", want)
		}
	}
}

// TestAJobCanBeCancelledAsSoonAsItIsHeardOf: whoever hears a job started can cancel it at
// once, before its process even exists, and it ends cancelled.
func TestAJobCanBeCancelledAsSoonAsItIsHeardOf(t *testing.T) {
	bus := events.New()
	feed, stop := bus.Subscribe(16)
	defer stop()
	e := newEnv(t, func(c *Config) { c.Events = bus })
	cancelled := make(chan error, 1)
	go func() {
		for ev := range feed {
			if ev.Kind == "job.started" {
				data, _ := ev.Data.(map[string]any)
				id, _ := data["id"].(int64)
				cancelled <- e.m.Cancel(context.Background(), id)
				return
			}
		}
	}()
	id := e.start(t, e.spec(t, "sleep 30"))
	select {
	case err := <-cancelled:
		if err != nil {
			t.Fatalf("Cancel on hearing the job started: %v", err)
		}
	case <-time.After(waitBound):
		t.Fatal("no job.started event")
	}
	if j := e.finished(t, id); j.Outcome != OutcomeCancelled {
		t.Errorf("outcome %q, want %q", j.Outcome, OutcomeCancelled)
	}
}

func TestKnownSecretsAreRedactedFromTailsContinuationsAndLogReads(t *testing.T) {
	const secret = "runtime-credential-0123456789"
	live := secrets.New()
	live.Add(secret)
	grant := mintedToken() // token-shaped, like every minted credential
	live.Add(grant)
	e := newEnv(t, func(c *Config) { c.Secrets = live })
	id := e.start(t, e.spec(t, "echo leaked "+secret+"; printf 'grant %s\\n' "+grant))
	j := e.finished(t, id)
	raw := readFile(t, j.LogPath)
	if !strings.Contains(raw, secret) || !strings.Contains(raw, grant) {
		t.Fatalf("the log itself should hold what the job wrote: %q", raw)
	}
	read, err := e.m.ReadLog(id, j.LogPath, 0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(read) != len(raw) {
		t.Errorf("a masked log read is %d bytes of a %d-byte log: paging by offsets breaks", len(read), len(raw))
	}
	for what, text := range map[string]string{
		"tail":         j.Tail,
		"continuation": e.continuations(t, id)[0].Text,
		"log read":     string(read),
	} {
		if strings.Contains(text, secret) || strings.Contains(text, grant[:20]) || strings.Contains(text, grant[23:]) ||
			!strings.Contains(text, "leaked (redacted)") || !strings.Contains(text, "grant (redacted)") {
			t.Errorf("%s = %q, want the secrets redacted", what, text)
		}
	}
	t.Run("LogReadInSmallPagesNeverShowsAPiece", func(t *testing.T) {
		var joined []byte
		for off := 0; off < len(raw); {
			page, err := e.m.ReadLog(id, j.LogPath, uint64(off), 5)
			if err != nil || len(page) == 0 {
				t.Fatalf("page at %d: %q, %v", off, page, err)
			}
			joined = append(joined, page...)
			off += len(page)
		}
		if string(joined) != string(read) {
			t.Fatalf("pages joined = %q, want %q", joined, read)
		}
	})
}

// TestOutputSecretsAreRedactedAfterTheJobIsUntracked: the engines' credentials
// (Config.OutputSecrets) stay redacted once a job is no longer tracked, unlike its own.
func TestOutputSecretsAreRedactedAfterTheJobIsUntracked(t *testing.T) {
	const key, short = "sk-engine-credential-0123", "sk-1234" // short: one under secrets.MinLength
	e := newEnv(t, func(c *Config) { c.OutputSecrets = []string{key, short} })
	id := e.start(t, e.spec(t, "echo key "+key+" and "+short))
	j := e.finished(t, id)
	for end := time.Now().Add(waitBound); e.m.tracked(id) != nil; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the finished job is still tracked")
		}
	}
	read, err := e.m.ReadLog(id, j.LogPath, 0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if want := "key " + secrets.MaskOf(len(key)) + " and " + short + "\n"; string(read) != want {
		t.Errorf("log read = %q, want %q", read, want)
	}
	for what, text := range map[string]string{"tail": j.Tail, "continuation": e.continuations(t, id)[0].Text} {
		if strings.Contains(text, key) || !strings.Contains(text, "key (redacted) and "+short) {
			t.Errorf("%s = %q, want the credential redacted and the short value kept", what, text)
		}
	}
}

// mintedToken is shaped like every credential the primary mints: 32 random bytes, base64url.
func mintedToken() string {
	var raw [32]byte
	_, _ = rand.Read(raw[:])
	return base64.RawURLEncoding.EncodeToString(raw[:])
}

func TestTailCutInsideASecretShowsNoPiece(t *testing.T) {
	live := secrets.New()
	grant := mintedToken()
	live.Add(grant)
	e := newEnv(t, func(c *Config) { c.Secrets = live })
	// The tail's window starts 20 bytes into the grant.
	pad := jobproc.TailChars - (len(grant) - 20)
	id := e.start(t, e.spec(t, fmt.Sprintf("printf 'x%%.0s' $(seq 100); printf '%%s' %s; head -c %d /dev/zero | tr '\\0' y", grant, pad)))
	j := e.finished(t, id)
	if strings.Contains(j.Tail, grant[20:]) || !strings.HasSuffix(j.Tail, strings.Repeat("y", pad)) {
		t.Fatalf("tail holds the end of a cut secret, or lost its output: %q", j.Tail[:80])
	}
}
