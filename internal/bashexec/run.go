package bashexec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/turncli/turncli/internal/containment"
	"github.com/turncli/turncli/internal/reaper"
	"github.com/turncli/turncli/internal/shellpriv"
)

const (
	// DefaultGrace is the time between SIGTERM and SIGKILL of a command a shell runs (a Bash
	// command of a response, locally or on a worker) when Spec.Grace is zero, and the shell
	// hosts' default. Background jobs have their own, shorter one: jobproc.DefaultJobGrace.
	DefaultGrace = 5 * time.Second
	// DefaultPipeWait bounds how long Run waits for end of file on the output pipes after the
	// process group is gone, when Spec.PipeWait is zero.
	DefaultPipeWait = 2 * time.Second
	// ChunkSize is the largest chunk passed to Output.
	ChunkSize = 32 << 10
	// maxDrain bounds what Run still delivers from a pipe once PipeWait has passed. The killed
	// group can have left at most one pipe buffer (at most fs.pipe-max-size, 1 MiB by default);
	// the bound only matters when a process outside the group keeps writing.
	maxDrain = 1 << 20
)

// Stream names an output stream of the command.
type Stream int

const (
	Stdout Stream = 1
	Stderr Stream = 2
)

func (s Stream) String() string {
	switch s {
	case Stdout:
		return "stdout"
	case Stderr:
		return "stderr"
	}
	return fmt.Sprintf("Stream(%d)", int(s))
}

// Spec describes one command.
type Spec struct {
	// Script is run as `bash --noprofile --norc -c <Script>`.
	Script string
	// Env is the complete environment, "K=V"; nil means empty. It is never merged with the
	// environment of the calling process. Bash itself adds PWD, SHLVL and _.
	Env []string
	// Dir is the working directory. It must name an existing directory.
	Dir string
	// Timeout ends the command after this long: SIGTERM to the process group, then SIGKILL after
	// Grace. Zero or negative means no timeout.
	Timeout time.Duration
	// Grace is the time between SIGTERM and SIGKILL; zero or negative means DefaultGrace.
	Grace time.Duration
	// Stdin is the command's standard input; nil means /dev/null. An *os.File is handed to the
	// process directly. Any other reader is copied by a goroutine that Run awaits: once the
	// process has exited the copy stops at the next return from Read, so a reader whose Read
	// blocks indefinitely holds Run until it returns.
	Stdin io.Reader
	// BashPath is the bash executable; empty means exec.LookPath("bash"), looked up once per
	// process in the caller's PATH (not Env's).
	BashPath string
	// User runs the command as this user; nil runs it as this process's own user.
	User *shellpriv.User
	// Sandbox, when not nil, starts the command inside a sandbox (shellpriv.StartIn). The
	// sandbox then holds what the command leaves behind: it gets no parent-death signal (the
	// sandbox ends when this process does) and no supervisor (internal/reaper).
	Sandbox shellpriv.Join
	// OpenFiles, when positive, is the command's limit of open files (RLIMIT_NOFILE, hard and
	// soft), in force before its first line runs.
	OpenFiles int
	// PipeWait bounds how long Run waits, after the process group is gone, for a descendant that
	// left the group and still holds stdout or stderr open; zero or negative means
	// DefaultPipeWait. When it passes, Run delivers what the pipes already buffer and closes them.
	PipeWait time.Duration
}

// Output receives chunks in order per stream. It may block: that is the backpressure (the
// process's pipe fills and the process blocks), so a slow consumer never makes memory grow.
// Chunks are at most ChunkSize bytes; the slice is only valid during the call.
//
// Run never calls Output concurrently, so it may write to a single stream such as a gRPC
// server stream without locking. Chunks of different streams interleave in the order Run read
// them, which is close to, but not exactly, the order the process wrote them. Run returns only
// after Output has returned for the last chunk, so an Output that may block for long must itself
// give up when the caller's context ends.
type Output func(s Stream, chunk []byte)

// Result is what happened to a command that started.
type Result struct {
	// ExitCode is the process's exit code; 128+signal when it was killed by a signal (as bash
	// reports it), for example 143 for SIGTERM and 137 for SIGKILL.
	ExitCode int
	// TimedOut is true when Spec.Timeout fired before the process exited.
	TimedOut bool
	// Cancelled is true when ctx ended before the process exited.
	Cancelled bool
	// Duration is the time from start until the main process exited.
	Duration time.Duration
}

// ErrBadSpec reports a Spec that cannot describe a command, such as a missing directory.
var ErrBadSpec = errors.New("bashexec: bad spec")

var lookBash = sync.OnceValues(func() (string, error) { return exec.LookPath("bash") })

// Run starts the command and blocks until it has exited and its output is fully delivered.
// ctx cancellation: SIGTERM the whole process group, then SIGKILL after Grace. An error is
// returned only when the command could not be started (bad dir, no bash, ctx already done); a
// non-zero exit is data. No goroutine started by Run outlives it.
func Run(ctx context.Context, spec Spec, out Output) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("bashexec: not started: %w", context.Cause(ctx))
	}
	bash := spec.BashPath
	if bash == "" {
		var err error
		if bash, err = lookBash(); err != nil {
			return Result{}, fmt.Errorf("bashexec: find bash: %w", err)
		}
	}
	if err := checkDir(spec.Dir); err != nil {
		return Result{}, err
	}

	p, err := openPipes(spec.Stdin)
	if err != nil {
		return Result{}, err
	}
	user := spec.User
	if user != nil {
		if err := p.giveTo(user.Uid, user.Gid); err != nil {
			p.closeChild()
			p.closeParent()
			return Result{}, err
		}
	}
	env := spec.Env
	if env == nil {
		env = []string{} // nil would make os/exec inherit os.Environ()
	}
	cmd := &exec.Cmd{
		Path:   bash,
		Args:   []string{"bash", "--noprofile", "--norc", "-c", spec.Script},
		Env:    env,
		Dir:    spec.Dir,
		Stdin:  p.childStdin,
		Stdout: p.childStdout,
		Stderr: p.childStderr,
		// Setsid: the command leads a session and group of its own with no controlling
		// terminal, so it cannot reach the terminal the primary or worker was started from
		// (reading it, writing to it, or pushing input into it with TIOCSTI).
		// Pdeathsig: if the primary or worker dies abruptly, its shells die with it rather than
		// running on unowned.
		SysProcAttr: &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL},
	}
	if spec.OpenFiles > 0 {
		uid, gid := -1, -1
		if user != nil {
			uid, gid = int(user.Uid), int(user.Gid)
		}
		prologue, err := openFilesPrologue(spec.OpenFiles, uid, gid)
		if err != nil {
			p.closeChild()
			p.closeParent()
			return Result{}, err
		}
		defer prologue.Close()
		cmd.ExtraFiles, cmd.Env = []*os.File{prologue}, withBashEnv(cmd.Env)
	}
	if spec.Sandbox != nil {
		// The child's parent is outside its PID namespace, where a parent-death signal cannot be
		// checked at start (os/exec would kill the child); the sandbox's init dies with this
		// process and takes the namespace with it.
		cmd.SysProcAttr.Pdeathsig = 0
	}
	leaf, err := containment.NewCommand()
	if err != nil {
		p.closeChild()
		p.closeParent()
		return Result{}, fmt.Errorf("bashexec: %w", err)
	}
	defer leaf.Remove() // after the group kill below: kills whatever left the group, then the leaf
	leaf.Apply(cmd.SysProcAttr)
	kill := syscall.SIGKILL
	if leaf == nil && spec.Sandbox == nil {
		// No cgroup here: a supervisor holds the tree instead, alone in the group Run signals.
		// It forwards SIGTERM; SIGKILL would end it before it could kill the tree, so the kill
		// is asked of it.
		if err := reaper.Wrap(cmd, true); err != nil {
			p.closeChild()
			p.closeParent()
			return Result{}, fmt.Errorf("bashexec: start: %w", err)
		}
		kill = reaper.KillSignal
	}
	start := time.Now()
	err = shellpriv.StartIn(cmd, user, spec.Sandbox) // without privileges, as the shell user
	leaf.Started()
	if err != nil {
		p.closeChild()
		p.closeParent()
		return Result{}, fmt.Errorf("bashexec: start: %w", err)
	}
	p.closeChild() // the process holds its own copies now

	pgid := cmd.Process.Pid // a session's leader leads its first group too
	exited := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { awaitExit(pgid); close(exited) })
	p.startCopying(&wg, spec.Stdin, out)

	res := Result{}
	res.TimedOut, res.Cancelled = superviseUntilExit(ctx, pgid, spec.Timeout, orDefault(spec.Grace, DefaultGrace), kill, exited)
	res.Duration = time.Since(start)

	// The leader has exited but is not yet reaped, so the group id still names this group.
	// Kill what is left of it: background children do not survive their command. The leaf
	// holds the rest of the tree, including what called setsid and left the group. (A
	// supervisor, the leader where there is no leaf, has killed its tree before exiting.)
	_ = signalGroup(pgid, syscall.SIGKILL)
	_ = leaf.Kill()
	_ = cmd.Wait() // reap; the status is read from ProcessState below
	res.ExitCode = ExitCode(cmd.ProcessState)

	p.finish(orDefault(spec.PipeWait, DefaultPipeWait))
	wg.Wait()
	p.closeParent()
	return res, nil
}

// superviseUntilExit returns once the process behind exited has exited, first stopping its group
// (SIGTERM, then kill after grace) when the timeout fires or ctx ends.
func superviseUntilExit(ctx context.Context, pgid int, timeout, grace time.Duration, kill syscall.Signal, exited <-chan struct{}) (timedOut, cancelled bool) {
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	select {
	case <-exited:
		return false, false
	case <-expired:
		timedOut = true
	case <-ctx.Done():
		cancelled = true
	}
	select {
	case <-exited: // exited at the same moment: nothing was stopped
		return false, false
	default:
	}
	stopGroup(pgid, grace, kill, exited)
	return timedOut, cancelled
}

func checkDir(dir string) error {
	if dir == "" {
		return fmt.Errorf("%w: Dir is empty", ErrBadSpec)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%w: Dir: %w", ErrBadSpec, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: Dir %q is not a directory", ErrBadSpec, dir)
	}
	return nil
}

// ExitCode is a finished process's exit code as Bash reports it: 128+N when signal N killed it,
// -1 when there is no state.
func ExitCode(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
