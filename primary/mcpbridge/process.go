package mcpbridge

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// process is one stdio server subprocess: the leader of its own process group, its two pipes,
// and the goroutine that waits for it. stop ends it; done closes once it is reaped and nothing
// is left of its group.
type process struct {
	cmd    *exec.Cmd
	stdin  *os.File // the parent's write end of the server's stdin
	stdout *os.File // the parent's read end of the server's stdout
	stderr *tailWriter
	pgid   int
	grace  time.Duration

	exited chan struct{} // the leader exited (not yet reaped: its pid still names the group)
	done   chan struct{} // reaped; state is set
	state  *os.ProcessState

	stopOnce sync.Once
}

// startProcess starts the server of cfg with exactly env as its environment. The goroutine
// that waits for it is counted in wg.
func startProcess(cfg ServerConfig, env []string, grace time.Duration, wg *sync.WaitGroup) (*process, error) {
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		closeFiles(stdinR, stdinW)
		return nil, err
	}
	p := &process{
		stdin: stdinW, stdout: stdoutR, stderr: &tailWriter{max: 4096}, grace: grace,
		exited: make(chan struct{}), done: make(chan struct{}),
	}
	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Env = env
	cmd.Dir = cfg.Dir
	cmd.Stdin = stdinR
	cmd.Stdout = stdoutW
	cmd.Stderr = p.stderr
	// A process that left the group may keep stderr open: Wait gives up on it after grace.
	cmd.WaitDelay = grace
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL} // dies with the primary
	if err := cmd.Start(); err != nil {
		closeFiles(stdinR, stdinW, stdoutR, stdoutW)
		return nil, err
	}
	closeFiles(stdinR, stdoutW) // the server holds its own copies now
	p.cmd = cmd
	p.pgid = cmd.Process.Pid // Setpgid with Pgid 0: the group is named after its leader
	wg.Go(func() {
		awaitExit(p.pgid)
		close(p.exited)
		// The leader is an unreaped zombie, so the group id cannot have been reused: kill what
		// is left of the group. A server's children do not outlive it.
		_ = signalGroup(p.pgid, syscall.SIGKILL)
		_ = cmd.Wait()
		p.state = cmd.ProcessState
		close(p.done)
	})
	return p, nil
}

// stop ends the server the way the MCP stdio transport asks: close its stdin and let it exit,
// then SIGTERM its group, then SIGKILL it, each step after grace. It returns once the server
// is reaped. It is safe to call more than once and from several goroutines.
func (p *process) stop() {
	p.stopOnce.Do(func() {
		_ = p.stdin.Close()
		timer := time.NewTimer(p.grace)
		defer timer.Stop()
		select {
		case <-p.exited:
		case <-timer.C:
			_ = signalGroup(p.pgid, syscall.SIGTERM)
			timer.Reset(p.grace)
			select {
			case <-p.exited:
			case <-timer.C:
				_ = signalGroup(p.pgid, syscall.SIGKILL)
			}
		}
		<-p.done
		_ = p.stdout.Close()
	})
	<-p.done
}

// status describes how the server ended ("exit status 3", "signal: killed"); "" while it runs.
func (p *process) status() string {
	select {
	case <-p.done:
		return p.state.String()
	default:
		return ""
	}
}

// stdinCloser is the writing half the SDK's transport gets: writes go to the server's stdin, and
// closing it stops the server.
type stdinCloser struct{ p *process }

func (w stdinCloser) Write(b []byte) (int, error) { return w.p.stdin.Write(b) }

func (w stdinCloser) Close() error {
	w.p.stop()
	return nil
}

// stdoutReader is the reading half the SDK's transport gets. Closing it only unblocks the
// reader: stop closes the pipe itself once the server is reaped.
type stdoutReader struct{ p *process }

func (r stdoutReader) Read(b []byte) (int, error) { return r.p.stdout.Read(b) }

func (r stdoutReader) Close() error {
	// Unblocks a pending Read; the server may still be writing, which now fails with EPIPE.
	return r.p.stdout.Close()
}

// signalGroup sends sig to every process of group pgid; an empty group is not an error.
func signalGroup(pgid int, sig syscall.Signal) error {
	err := syscall.Kill(-pgid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// awaitExit blocks until the child pid has exited, without reaping it (WNOWAIT), so that its
// pid, and the id of the group it leads, stay reserved until cmd.Wait reaps it.
func awaitExit(pid int) {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return // nil, or ECHILD if it was reaped already: either way it has exited
		}
	}
}

func closeFiles(files ...*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}

// tailWriter keeps the last max bytes written to it (a server's stderr, for the log).
type tailWriter struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (w *tailWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	if over := len(w.buf) - w.max; over > 0 {
		w.buf = slices.Delete(w.buf, 0, over)
	}
	return len(b), nil
}

func (w *tailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}

// serverEnv is the environment of a stdio server: the allowed variables the primary has, then
// the fixed ones. Never nil, so os/exec cannot fall back to the primary's environment.
func serverEnv(cfg ServerConfig, lookup func(string) (string, bool)) []string {
	env := []string{}
	seen := map[string]bool{}
	for _, name := range append(slices.Clone(DefaultEnvAllow), cfg.EnvAllow...) {
		if seen[name] {
			continue
		}
		seen[name] = true
		if _, fixed := cfg.Env[name]; fixed {
			continue
		}
		if v, ok := lookup(name); ok {
			env = append(env, name+"="+v)
		}
	}
	names := make([]string, 0, len(cfg.Env))
	for name := range cfg.Env {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		env = append(env, fmt.Sprintf("%s=%s", name, cfg.Env[name]))
	}
	return env
}
