package bashexec

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/turncli/turncli/internal/shellpriv/shellprivtest"
)

// Short bounds for tests that stop real processes. Tests assert on outcomes, never on how fast
// something happened.
const (
	testTimeout = 200 * time.Millisecond
	// trapTimeout is for commands that must set a trap before their timeout: on a loaded
	// machine, starting bash under the race detector's reaper can take more than testTimeout.
	trapTimeout = 2 * time.Second
	testGrace   = 200 * time.Millisecond
	// exitBound is how long a test waits for a killed process to be gone before failing.
	exitBound = 10 * time.Second
)

// testSpec returns a Spec running script in a fresh directory (the shell user's) with an environment that holds only
// PATH, so tools like sleep, seq and setsid are found.
func testSpec(t *testing.T, script string) Spec {
	t.Helper()
	return Spec{
		Script: script,
		Env:    []string{"PATH=" + os.Getenv("PATH")},
		Dir:    shellprivtest.Dir(t),
	}
}

// capture collects what Run delivers. Run promises never to call Output concurrently, so capture
// takes no lock; the race detector checks the promise.
type capture struct {
	stdout, stderr bytes.Buffer
	maxChunk       int
}

func (c *capture) output(s Stream, chunk []byte) {
	c.maxChunk = max(c.maxChunk, len(chunk))
	switch s {
	case Stdout:
		c.stdout.Write(chunk)
	case Stderr:
		c.stderr.Write(chunk)
	}
}

func runCapture(t *testing.T, ctx context.Context, spec Spec) (Result, *capture) {
	t.Helper()
	c := &capture{}
	res, err := Run(ctx, spec, c.output)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if c.maxChunk > ChunkSize {
		t.Errorf("largest chunk = %d bytes, want at most %d", c.maxChunk, ChunkSize)
	}
	return res, c
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		script string
		want   int
	}{
		{"ExitZeroIsReported", "exit 0", 0},
		{"ExitOneIsDataNotError", "exit 1", 1},
		{"ExitFortyTwoIsDataNotError", "exit 42", 42},
		{"LastCommandStatusIsTheExitCode", "false", 1},
		{"DeathBySignalIsReportedAs128PlusSignal", "kill -KILL $$", 137},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, _ := runCapture(t, t.Context(), testSpec(t, tt.script))
			if res.ExitCode != tt.want {
				t.Errorf("ExitCode = %d, want %d", res.ExitCode, tt.want)
			}
			if res.TimedOut || res.Cancelled {
				t.Errorf("TimedOut = %v, Cancelled = %v, want both false", res.TimedOut, res.Cancelled)
			}
		})
	}
}

func TestStdoutAndStderrAreSeparatedAndOrdered(t *testing.T) {
	t.Parallel()
	script := `for i in 1 2 3; do echo "out$i"; echo "err$i" >&2; done`
	_, c := runCapture(t, t.Context(), testSpec(t, script))
	if got, want := c.stdout.String(), "out1\nout2\nout3\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	if got, want := c.stderr.String(), "err1\nerr2\nerr3\n"; got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}
}

// TestEnvironmentIsExactlySpecEnv is not parallel: it sets a variable in the test process.
func TestEnvironmentIsExactlySpecEnv(t *testing.T) {
	t.Setenv("BASHEXEC_TEST_SECRET", "must-not-leak")
	// Bash itself sets these for every script it runs.
	bashOwn := []string{"PWD", "SHLVL", "_", "OLDPWD"}

	tests := []struct {
		name string
		env  []string
		want map[string]string // variables other than bashOwn, exactly
	}{
		{"OnlySpecEnvIsVisible", []string{"A=1"}, map[string]string{"A": "1"}},
		{"NilEnvIsEmptyNotInherited", nil, map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := testSpec(t, "env")
			spec.Env = tt.env // no PATH: bash falls back to its built-in search path for env
			res, c := runCapture(t, t.Context(), spec)
			if res.ExitCode != 0 {
				t.Fatalf("env exited %d; stderr: %s", res.ExitCode, c.stderr.String())
			}
			got := map[string]string{}
			for line := range strings.Lines(c.stdout.String()) {
				k, v, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "=")
				if !slices.Contains(bashOwn, k) {
					got[k] = v
				}
			}
			if _, leaked := got["BASHEXEC_TEST_SECRET"]; leaked {
				t.Errorf("a variable of the test process reached the command: %q", c.stdout.String())
			}
			if !mapsEqual(got, tt.want) {
				t.Errorf("environment (without %v) = %v, want %v", bashOwn, got, tt.want)
			}
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestCommandRunsInSpecDir(t *testing.T) {
	t.Parallel()
	spec := testSpec(t, "pwd -P; cat marker")
	if err := os.WriteFile(filepath.Join(spec.Dir, "marker"), []byte("here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantDir, err := filepath.EvalSymlinks(spec.Dir)
	if err != nil {
		t.Fatal(err)
	}
	_, c := runCapture(t, t.Context(), spec)
	if got, want := c.stdout.String(), wantDir+"\nhere\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
}

func TestRunFailsOnlyWhenTheCommandCannotStart(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()

	tests := []struct {
		name    string
		ctx     context.Context
		mutate  func(*Spec)
		wantErr error // nil: any error
	}{
		{"MissingDirIsBadSpec", t.Context(), func(s *Spec) { s.Dir = filepath.Join(s.Dir, "missing") }, ErrBadSpec},
		{"FileAsDirIsBadSpec", t.Context(), func(s *Spec) { s.Dir = file }, ErrBadSpec},
		{"EmptyDirIsBadSpec", t.Context(), func(s *Spec) { s.Dir = "" }, ErrBadSpec},
		{"MissingBashIsAnError", t.Context(), func(s *Spec) { s.BashPath = filepath.Join(s.Dir, "no-bash") }, nil},
		{"DoneContextStartsNothing", cancelled, func(*Spec) {}, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec := testSpec(t, "echo ran")
			tt.mutate(&spec)
			var delivered bool
			res, err := Run(tt.ctx, spec, func(Stream, []byte) { delivered = true })
			if err == nil {
				t.Fatalf("Run = %+v, nil; want an error", res)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Run error = %v, want errors.Is %v", err, tt.wantErr)
			}
			if delivered || res != (Result{}) {
				t.Errorf("Run delivered output or a result (%+v) for a command that did not start", res)
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		script     string
		wantExit   int
		wantStdout string
	}{
		// The trap runs and exits 7 only if TERM arrives, and before KILL.
		{"TimeoutSendsTERMFirst", `trap 'echo TERM; exit 7' TERM; sleep 100 & wait`, 7, "TERM\n"},
		{"TimeoutTERMEndsAPlainCommand", `sleep 100`, 143, ""},
		// Ignored signals are inherited, so neither bash nor sleep reacts to TERM.
		{"ProcessIgnoringTERMIsKilledAfterGrace", `trap '' TERM; sleep 100; echo survived`, 137, ""},
		{"NestedBashIsStoppedWithTheGroup", `bash -c 'sleep 100; :'; echo after`, 143, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec := testSpec(t, tt.script)
			spec.Timeout = trapTimeout
			spec.Grace = testGrace
			res, c := runCapture(t, t.Context(), spec)
			if !res.TimedOut || res.Cancelled {
				t.Errorf("TimedOut = %v, Cancelled = %v; want true, false", res.TimedOut, res.Cancelled)
			}
			if res.ExitCode != tt.wantExit {
				t.Errorf("ExitCode = %d, want %d", res.ExitCode, tt.wantExit)
			}
			if got := c.stdout.String(); got != tt.wantStdout {
				t.Errorf("stdout = %q, want %q", got, tt.wantStdout)
			}
		})
	}
}

func TestCommandFinishingBeforeTimeoutIsNotTimedOut(t *testing.T) {
	t.Parallel()
	spec := testSpec(t, "echo quick")
	spec.Timeout = time.Hour
	res, c := runCapture(t, t.Context(), spec)
	if res.TimedOut || res.Cancelled || res.ExitCode != 0 || c.stdout.String() != "quick\n" {
		t.Errorf("Result = %+v, stdout %q; want a plain successful run", res, c.stdout.String())
	}
}

// pidWatcher parses the pids a script prints on stdout, one per line, opens a pidfd for each
// while the process is known to be alive, and calls ready once want pids are known.
type pidWatcher struct {
	t       *testing.T
	want    int
	ready   func()
	pending []byte
	pidfds  map[int]int // pid -> pidfd
	errs    []error
}

// exitedPID stands for the pidfd of a watched process that had exited and been reaped before
// its pid was read.
const exitedPID = -1

func newPIDWatcher(t *testing.T, want int, ready func()) *pidWatcher {
	w := &pidWatcher{t: t, want: want, ready: ready, pidfds: map[int]int{}}
	t.Cleanup(func() {
		for _, fd := range w.pidfds {
			if fd == exitedPID {
				continue
			}
			// Never leave a test's process behind, whatever the outcome.
			_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
			_ = unix.Close(fd)
		}
	})
	return w
}

func (w *pidWatcher) output(s Stream, chunk []byte) {
	if s != Stdout {
		return
	}
	w.pending = append(w.pending, chunk...)
	for {
		line, rest, ok := bytes.Cut(w.pending, []byte("\n"))
		if !ok {
			return
		}
		w.pending = rest
		pid, err := strconv.Atoi(string(line))
		if err != nil {
			w.errs = append(w.errs, err)
			continue
		}
		fd, err := unix.PidfdOpen(pid, 0)
		if errors.Is(err, unix.ESRCH) {
			// Already gone and reaped: the supervisor of a host without cgroups kills what a
			// command left behind as soon as the command ends, maybe before its pid is read.
			fd = exitedPID
		} else if err != nil {
			w.errs = append(w.errs, err)
			continue
		}
		w.pidfds[pid] = fd
		if len(w.pidfds) == w.want && w.ready != nil {
			w.ready()
		}
	}
}

// requireAllExited fails the test unless every watched process has exited. A pidfd becomes
// readable when its process has exited, even while it waits, as a zombie, for its reaper;
// kill(pid, 0) would still succeed for such a zombie.
func (w *pidWatcher) requireAllExited() {
	w.t.Helper()
	for _, err := range w.errs {
		w.t.Errorf("watching pids: %v", err)
	}
	if len(w.pidfds) != w.want {
		w.t.Fatalf("watched %d pids, want %d", len(w.pidfds), w.want)
	}
	for pid, fd := range w.pidfds {
		if fd == exitedPID {
			continue
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		var n int
		var err error
		for {
			n, err = unix.Poll(fds, int(exitBound/time.Millisecond))
			if !errors.Is(err, unix.EINTR) {
				break
			}
		}
		if err != nil {
			w.t.Errorf("poll pidfd of %d: %v", pid, err)
		} else if n == 0 {
			w.t.Errorf("process %d is still running %v after Run returned", pid, exitBound)
		}
	}
}

func TestCancelKillsTheWholeGroup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		script string // prints the pids that must die, then waits
		pids   int
	}{
		{"BackgroundGrandchildIsKilled", `sleep 100 & echo $!; wait`, 1},
		{"ChildOfNestedBashIsKilled", `bash -c 'sleep 100 & echo $!; echo $$; wait; :'; :`, 2},
		{"BackgroundChildOfSubshellIsKilled", `( sleep 100 & echo $!; wait; : ) & echo $!; wait`, 2},
		{"GrandchildIgnoringTERMIsKilled", `(trap '' TERM; sleep 100) & echo $!; wait`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			w := newPIDWatcher(t, tt.pids, cancel)
			spec := testSpec(t, tt.script)
			spec.Grace = testGrace
			res, err := Run(ctx, spec, w.output)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if !res.Cancelled || res.TimedOut {
				t.Errorf("Cancelled = %v, TimedOut = %v; want true, false", res.Cancelled, res.TimedOut)
			}
			if res.ExitCode != 143 {
				t.Errorf("ExitCode = %d, want 143 (SIGTERM)", res.ExitCode)
			}
			w.requireAllExited()
		})
	}
}

func TestBackgroundChildrenDoNotOutliveTheCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		script string
	}{
		// The child holds stdout open: without the group kill Run would wait for it.
		{"ChildHoldingStdoutIsKilled", `sleep 100 & echo $!`},
		{"DetachedFromPipesChildIsKilled", `sleep 100 >/dev/null 2>&1 </dev/null & echo $!`},
		{"NohupChildIsKilled", `nohup sleep 100 >/dev/null 2>&1 & echo $!`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newPIDWatcher(t, 1, nil)
			spec := testSpec(t, tt.script)
			res, err := Run(t.Context(), spec, w.output)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.ExitCode != 0 || res.Cancelled || res.TimedOut {
				t.Errorf("Result = %+v, want a plain successful run", res)
			}
			w.requireAllExited()
		})
	}
}

func requireSetsid(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid(1) not installed; it is how a test process leaves the group")
	}
}

// escapeScript starts `sleep 100` in a new session, outside the command's process group, with the
// command's stdout and stderr (redirect applies to it), and prints its pid to printTo only once it
// has left the group: otherwise the group kill could catch it before setsid(2).
func escapeScript(redirect, printTo string) string {
	return `mkfifo escaped; setsid bash --noprofile --norc -c 'echo $$ >escaped; exec sleep 100' ` +
		redirect + ` & read pid <escaped; echo $pid ` + printTo + `;`
}

func TestProcessOutsideTheGroupHoldingAPipeDoesNotHangRun(t *testing.T) {
	t.Parallel()
	requireSetsid(t)
	for _, stream := range []string{"", ">&2"} {
		name := "HoldingStdoutAndStderr"
		if stream != "" {
			name = "HoldingOnlyStderr"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// The escaped process is not this package's to kill: the watcher kills it in cleanup.
			w := newPIDWatcher(t, 1, nil)
			spec := testSpec(t, escapeScript(stream, "")+` echo done >&2`)
			spec.PipeWait = 100 * time.Millisecond
			var stderr bytes.Buffer
			res, err := Run(t.Context(), spec, func(s Stream, chunk []byte) {
				w.output(s, chunk)
				if s == Stderr {
					stderr.Write(chunk)
				}
			})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.ExitCode != 0 || stderr.String() != "done\n" {
				t.Errorf("Result = %+v, stderr %q; want exit 0 and %q", res, stderr.String(), "done\n")
			}
			if len(w.pidfds) != 1 {
				t.Errorf("escaped pid not reported: %v", w.errs)
			}
		})
	}
}

// TestSlowConsumerLosesNothingWhenPipeWaitPasses: a process outside the group keeps stdout open,
// and PipeWait passes while Output is still consuming; what the command wrote is delivered anyway.
func TestSlowConsumerLosesNothingWhenPipeWaitPasses(t *testing.T) {
	t.Parallel()
	requireSetsid(t)
	var escaped int
	t.Cleanup(func() {
		if escaped > 0 {
			_ = unix.Kill(escaped, unix.SIGKILL)
		}
	})
	spec := testSpec(t, escapeScript("", ">&2")+` seq 1 50000`)
	spec.PipeWait = time.Millisecond
	var stdout, stderr bytes.Buffer
	res, err := Run(t.Context(), spec, func(s Stream, chunk []byte) {
		if s == Stderr {
			stderr.Write(chunk)
			return
		}
		stdout.Write(chunk)
		time.Sleep(20 * time.Millisecond) // a slow consumer, not a wait for anything
	})
	if pid, err := strconv.Atoi(strings.TrimSpace(stderr.String())); err == nil {
		escaped = pid
	}
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.ExitCode != 0 {
		t.Errorf("ExitCode = %d, want 0", res.ExitCode)
	}
	if got, want := stdout.String(), seq(50000); got != want {
		t.Errorf("stdout has %d bytes, want %d (the output of seq 1 50000)", len(got), len(want))
	}
}

func seq(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	return b.String()
}

// TestBlockingOutputHoldsTheProcessBack proves backpressure: the command can only write its
// final stderr line after its stdout has been consumed, apart from what the pipe buffers.
func TestBlockingOutputHoldsTheProcessBack(t *testing.T) {
	t.Parallel()
	const total = 10_000_000
	// A pipe buffers at most fs.pipe-max-size (1 MiB by default); head does not raise its pipe.
	const pipeBound = 1<<20 + ChunkSize

	spec := testSpec(t, `yes | head -c `+strconv.Itoa(total)+`; echo done >&2`)
	var (
		received      int
		outOfOrder    int
		receivedAtEnd = -1
	)
	res, err := Run(t.Context(), spec, func(s Stream, chunk []byte) {
		if s == Stderr {
			if string(chunk) == "done\n" {
				receivedAtEnd = received
			}
			return
		}
		for i, b := range chunk {
			want := byte('y')
			if (received+i)%2 == 1 {
				want = '\n'
			}
			if b != want {
				outOfOrder++
			}
		}
		received += len(chunk)
		time.Sleep(time.Millisecond) // a slow consumer
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.ExitCode != 0 {
		t.Errorf("ExitCode = %d, want 0", res.ExitCode)
	}
	if received != total || outOfOrder != 0 {
		t.Errorf("received %d bytes (%d out of order), want %d in order", received, outOfOrder, total)
	}
	if receivedAtEnd < total-pipeBound {
		t.Errorf("the command finished when only %d of %d bytes were consumed: output was buffered, not pushed back", receivedAtEnd, total)
	}
}

func TestLargeOutputIsDeliveredCompletely(t *testing.T) {
	t.Parallel()
	// About 6.9 MB on stdout and 0.6 MB on stderr, written concurrently.
	res, c := runCapture(t, t.Context(), testSpec(t, `seq 1 100000 >&2 & seq 1 1000000; wait`))
	if res.ExitCode != 0 {
		t.Errorf("ExitCode = %d, want 0", res.ExitCode)
	}
	if got, want := c.stdout.String(), seq(1_000_000); got != want {
		t.Errorf("stdout has %d bytes, want %d (the output of seq 1 1000000)", len(got), len(want))
	}
	if got, want := c.stderr.String(), seq(100_000); got != want {
		t.Errorf("stderr has %d bytes, want %d (the output of seq 1 100000)", len(got), len(want))
	}
}

func TestNilOutputDiscards(t *testing.T) {
	t.Parallel()
	res, err := Run(t.Context(), testSpec(t, "seq 1 100000; exit 3"), nil)
	if err != nil || res.ExitCode != 3 {
		t.Errorf("Run = %+v, %v; want exit 3", res, err)
	}
}

func TestStdin(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "input")
	if err := os.WriteFile(file, []byte("from a file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		stdin      func(t *testing.T) io.Reader
		script     string
		wantStdout string
		wantExit   int
	}{
		{"ReaderIsTheCommandsStdin", func(*testing.T) io.Reader { return strings.NewReader("hello\nworld\n") }, "cat", "hello\nworld\n", 0},
		{"NilStdinIsEmpty", func(*testing.T) io.Reader { return nil }, "cat; echo end", "end\n", 0},
		{"FileIsTheCommandsStdin", func(t *testing.T) io.Reader {
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			return f
		}, "cat", "from a file\n", 0},
		{"UnreadStdinDoesNotHoldRun", func(*testing.T) io.Reader { return bytes.NewReader(make([]byte, 10<<20)) }, "exit 3", "", 3},
		{"LargeStdinIsCopiedCompletely", func(*testing.T) io.Reader { return strings.NewReader(seq(200_000)) }, "wc -l", "200000\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec := testSpec(t, tt.script)
			spec.Stdin = tt.stdin(t)
			res, c := runCapture(t, t.Context(), spec)
			if res.ExitCode != tt.wantExit {
				t.Errorf("ExitCode = %d, want %d; stderr %q", res.ExitCode, tt.wantExit, c.stderr.String())
			}
			if got := strings.TrimLeft(c.stdout.String(), " "); got != tt.wantStdout {
				t.Errorf("stdout = %q, want %q", got, tt.wantStdout)
			}
		})
	}
}
