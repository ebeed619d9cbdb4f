package shelltk

import (
	"context"
	"errors"
	"fmt"
)

// ErrUnknownHandle is the failure of a check or kill naming no background command of the
// calling response.
var ErrUnknownHandle = errors.New("Unknown shell handle")

// responseCommands is one response's background commands, by handle. Records of exited
// commands stay until checked (or killed) once; all of them go when the Lifetime ends.
type responseCommands struct {
	lifetime context.Context
	byHandle map[string]*command
	// stop unregisters the function that drops this entry when lifetime ends.
	stop func() bool
}

// liveCount is how many of the response's background commands have not exited. Callers hold
// t.mu.
func (e *responseCommands) liveCount() int {
	n := 0
	for _, c := range e.byHandle {
		if !c.exited() {
			n++
		}
	}
	return n
}

// roomFor fails when the response already runs as many background commands as allowed.
func (t *Toolkit) roomFor(responseID string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.responses[responseID]; e != nil && e.liveCount() >= t.maxBackground {
		return t.errTooMany()
	}
	return nil
}

func (t *Toolkit) errTooMany() error {
	return fmt.Errorf("At most %d shell commands may run in the background per response", t.maxBackground)
}

// adopt registers c as a background command of the response and returns its new handle. The
// record is dropped when lifetime ends, which also stops the command (its context derives from
// lifetime).
func (t *Toolkit) adopt(responseID string, lifetime context.Context, c *command) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if lifetime.Err() != nil {
		return "", errors.New("The response has ended; the shell command was stopped")
	}
	e := t.responses[responseID]
	if e == nil {
		e = &responseCommands{lifetime: lifetime, byHandle: make(map[string]*command)}
		e.stop = context.AfterFunc(lifetime, func() { t.drop(responseID, e) })
		t.responses[responseID] = e
	}
	if e.liveCount() >= t.maxBackground {
		t.forgetIfEmpty(responseID, e)
		return "", t.errTooMany()
	}
	handle := t.newHandle()
	if _, taken := e.byHandle[handle]; taken {
		t.forgetIfEmpty(responseID, e)
		return "", errors.New("shell handle collision")
	}
	e.byHandle[handle] = c
	return handle, nil
}

// lookup returns the response's command with this handle, or ErrUnknownHandle. Once the
// response's Lifetime has ended every handle is unknown, even before drop has run.
func (t *Toolkit) lookup(responseID, handle string) (*command, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.responses[responseID]
	if e == nil || e.lifetime.Err() != nil {
		return nil, ErrUnknownHandle
	}
	c := e.byHandle[handle]
	if c == nil {
		return nil, ErrUnknownHandle
	}
	return c, nil
}

// release forgets the record of an exited command that has been reported.
func (t *Toolkit) release(responseID, handle string, c *command) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.responses[responseID]
	if e == nil || e.byHandle[handle] != c {
		return
	}
	delete(e.byHandle, handle)
	t.forgetIfEmpty(responseID, e)
}

// forgetIfEmpty removes a response entry that holds no commands. Callers hold t.mu.
func (t *Toolkit) forgetIfEmpty(responseID string, e *responseCommands) {
	if len(e.byHandle) == 0 && t.responses[responseID] == e {
		e.stop()
		delete(t.responses, responseID)
	}
}

// drop runs when a response's Lifetime ends: it stops every background command of the response
// (already under way, since their contexts derive from the Lifetime) and forgets them.
func (t *Toolkit) drop(responseID string, e *responseCommands) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range e.byHandle {
		c.cancel()
	}
	if t.responses[responseID] == e {
		delete(t.responses, responseID)
	}
}
