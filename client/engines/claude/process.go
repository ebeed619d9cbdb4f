package claude

import (
	"context"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// The CLI runs in a process group of its own, so that stopping the run stops everything it
// started (the shell of its Bash tool, the MCP server, the hook): the driver signals the
// group, SIGTERM first and SIGKILL after stopGrace.

// stopGrace is how long the CLI has to end after SIGTERM.
const stopGrace = 5 * time.Second

// pipeGrace is how long Wait waits for the CLI's output pipes to close once it exited: a
// process it left behind may hold them open.
const pipeGrace = 2 * time.Second

// group is a started CLI and its process group.
type group struct {
	cmd *exec.Cmd
	// mu orders signals and the end of Wait: once the leader is reaped its id may be reused,
	// so the group is not signalled after Wait returned. (Within Wait the id stays the
	// group's while any member lives; a group whose members all ended cannot be signalled.)
	mu     sync.Mutex
	reaped bool
}

// startGroup starts cmd as the leader of a new process group, standard input /dev/null
// (exec's default for a nil Stdin).
func startGroup(cmd *exec.Cmd) (*group, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = pipeGrace
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &group{cmd: cmd}, nil
}

// signal sends sig to the group unless its leader has been reaped.
func (g *group) signal(sig syscall.Signal) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.reaped {
		_ = syscall.Kill(-g.cmd.Process.Pid, sig)
	}
}

// stop asks the group to end, and kills it if it has not after stopGrace; done closes when
// the leader was reaped.
func (g *group) stop(done <-chan struct{}) {
	g.signal(syscall.SIGTERM)
	t := time.NewTimer(stopGrace)
	defer t.Stop()
	select {
	case <-t.C:
		g.signal(syscall.SIGKILL)
	case <-done:
	}
}

// wait waits for the leader and marks it reaped.
func (g *group) wait() error {
	err := g.cmd.Wait()
	g.mu.Lock()
	g.reaped = true
	g.mu.Unlock()
	return err
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

var _ io.Writer = (*tail)(nil)

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// execute runs the CLI to its end, showing its events on stdout, and stops it when ctx ends.
// It returns what the events gave, how the CLI ended and the end of its standard error; err
// when it could not start.
func execute(ctx context.Context, cli string, inv invocation, stdout io.Writer) (end streamEnd, waitErr error, stderrTail string, err error) {
	cmd := exec.Command(cli, inv.args...)
	cmd.Env = inv.env
	errTail := &tail{max: stderrKept}
	cmd.Stderr = errTail
	events, eventsW := io.Pipe()
	cmd.Stdout = eventsW
	g, err := startGroup(cmd)
	if err != nil {
		return streamEnd{}, nil, "", err
	}
	reaped := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			g.stop(reaped)
		case <-reaped:
		}
	}()
	read := make(chan streamEnd, 1)
	go func() {
		end := readEvents(events, stdout)
		_, _ = io.Copy(io.Discard, events) // a line too long to read must not block the CLI
		read <- end
	}()
	waitErr = g.wait()
	close(reaped)
	eventsW.Close()
	return <-read, waitErr, errTail.String(), nil
}
