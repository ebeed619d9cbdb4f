package shelltk

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/turncli/turncli/internal/bashexec"
	"github.com/turncli/turncli/primary/catalog"
)

// command is one nested command and the goroutine that runs it. The goroutine is the record's
// own: it ends when RunNested returns, that is when the command has exited, and cancel (or the
// end of the Lifetime the command's context derives from) is the one way to make that happen.
type command struct {
	cancel context.CancelFunc
	// done is closed when the command has exited and its outcome is recorded.
	done chan struct{}

	mu             sync.Mutex
	stdout, stderr capture
	killRequested  bool
	result         bashexec.Result // valid once done is closed
	err            error           // RunNested's error: the command did not start
}

// start runs script through shell in a new goroutine, under a context derived from lifetime so
// that the command outlives the call that started it but never the response.
func start(lifetime context.Context, shell catalog.ShellRunner, script string, timeout time.Duration) *command {
	ctx, cancel := context.WithCancel(lifetime)
	c := &command{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		defer cancel()
		res, err := shell.RunNested(ctx, script, timeout, c.write)
		c.mu.Lock()
		c.result, c.err = res, err
		c.mu.Unlock()
	}()
	return c
}

func (c *command) write(s bashexec.Stream, chunk []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s == bashexec.Stderr {
		c.stderr.write(chunk)
	} else {
		c.stdout.write(chunk)
	}
}

// exited reports whether the command has exited (or failed to start).
func (c *command) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// startError is the failure of a command that exited without starting, or nil.
func (c *command) startError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.startErrorLocked()
}

func (c *command) startErrorLocked() error {
	if c.err == nil {
		return nil
	}
	return fmt.Errorf("Shell command did not start: %w", c.err)
}

// kill asks the command to stop: the runner sends TERM to its process group, then KILL after its
// grace period. It does not wait.
func (c *command) kill() {
	c.mu.Lock()
	c.killRequested = true
	c.mu.Unlock()
	c.cancel()
}

// report is the command's status as a result value. handle is included when not empty.
//
//	running: {"handle","status":"running","stdout","stderr"}
//	exited:  {"exit_code","handle","status":"exited"|"killed","stderr","stdout","timed_out"}
//	failed:  {"error","handle","status":"failed","stderr","stdout"} (the command did not start)
func (c *command) report(handle string) map[string]any {
	exited := c.exited() // before taking mu: the outcome is recorded before done closes
	c.mu.Lock()
	defer c.mu.Unlock()
	stdout, stderr := renderStreams(&c.stdout, &c.stderr)
	v := map[string]any{"stdout": stdout, "stderr": stderr}
	if handle != "" {
		v["handle"] = handle
	}
	switch {
	case !exited:
		v["status"] = "running"
	case c.err != nil:
		v["status"] = "failed"
		v["error"] = c.startErrorLocked().Error()
	default:
		v["status"] = "exited"
		if c.killRequested && c.result.Cancelled {
			v["status"] = "killed"
		}
		v["exit_code"] = c.result.ExitCode
		v["timed_out"] = c.result.TimedOut
	}
	return v
}
