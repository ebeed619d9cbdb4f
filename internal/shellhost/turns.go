package shellhost

import (
	"fmt"
	"sync"

	"github.com/turncli/turncli/internal/sandbox"
)

// turn is the sandbox of one response's commands. Its own lock, not the runner's, is held while
// its sandbox starts: building one takes the kernel tens of milliseconds, and the first
// commands of many responses must not wait for each other's.
type turn struct {
	agent string

	mu       sync.Mutex
	sb       *sandbox.Sandbox // nil until its first command
	released bool
}

// sandboxes holds the responses' sandboxes.
type sandboxes struct {
	mu    sync.Mutex
	turns map[string]*turn
}

// sandboxFor is the response's sandbox, made on its first command. A command with no response
// gets a sandbox of its own, ended by done.
func (r *Runner) sandboxFor(response, agent, workspace string) (sb *sandbox.Sandbox, done func(), err error) {
	if response == "" {
		sb, err := sandbox.Start(r.view(workspace), r.cfg.Sandboxing.Limits)
		if err != nil {
			return nil, nil, err
		}
		return sb, func() { _ = sb.Close() }, nil
	}
	r.boxes.mu.Lock()
	t := r.boxes.turns[response]
	if t == nil {
		if r.boxes.turns == nil {
			r.boxes.turns = map[string]*turn{}
		}
		t = &turn{agent: agent}
		r.boxes.turns[response] = t
	}
	r.boxes.mu.Unlock()
	if t.agent != agent {
		return nil, nil, fmt.Errorf("response %s runs agent %q, not %q", response, t.agent, agent)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.released {
		return nil, nil, sandbox.ErrEnded // the response was released while this command waited
	}
	if t.sb != nil && t.sb.Alive() {
		return t.sb, func() {}, nil
	}
	if t.sb != nil {
		_ = t.sb.Close() // its init was killed: the next command gets a new sandbox
	}
	t.sb, err = sandbox.Start(r.view(workspace), r.cfg.Sandboxing.Limits)
	if err != nil {
		return nil, nil, err
	}
	return t.sb, func() {}, nil
}

// end ends the turn's sandbox, once any start under way has finished; a later command of the
// turn gets no sandbox.
func (t *turn) end() {
	t.mu.Lock()
	t.released = true
	sb := t.sb
	t.sb = nil
	t.mu.Unlock()
	if sb != nil {
		_ = sb.Close()
	}
}

// Release ends the response's sandbox and everything still running in it. It is called when
// the response closes; a response with no sandbox is not an error.
func (r *Runner) Release(response string) {
	r.boxes.mu.Lock()
	t := r.boxes.turns[response]
	delete(r.boxes.turns, response)
	r.boxes.mu.Unlock()
	if t != nil {
		t.end()
	}
}

// Close ends every sandbox.
func (r *Runner) Close() {
	r.boxes.mu.Lock()
	turns := r.boxes.turns
	r.boxes.turns = nil
	r.boxes.mu.Unlock()
	for _, t := range turns {
		t.end()
	}
}
