package testtk

import (
	"context"
	"sync"

	"github.com/turncli/turncli/primary/catalog"
)

// Release opens the named gate: every gate call blocked on it returns, and later gate calls with
// that name return at once. Releasing an open gate does nothing.
func (t *Toolkit) Release(name string) {
	g := t.gates.get(name)
	g.releaseOnce.Do(func() { close(g.released) })
}

// release is Release as a function: a person trying the Agent CLI releases a gate with
// `mindroom-agent tools call test.release '{"name":"g"}'`.
func (t *Toolkit) release(call catalog.Call) (catalog.Result, error) {
	name, _, err := text(call.Arguments, "name")
	if err != nil {
		return catalog.Result{}, err
	}
	t.Release(name)
	return catalog.Result{Value: map[string]any{"released": name}}, nil
}

// Started returns a channel that is closed once a gate call with this name has arrived (and,
// unless the gate was already released, is blocked on it). Tests wait on it to know "the call is
// running" without sleeping.
func (t *Toolkit) Started(name string) <-chan struct{} {
	return t.gates.get(name).started
}

// gate blocks until the named gate is released or ctx ends.
func (t *Toolkit) gate(ctx context.Context, call catalog.Call) (catalog.Result, error) {
	name, _, err := text(call.Arguments, "name")
	if err != nil {
		return catalog.Result{}, err
	}
	g := t.gates.get(name)
	g.startOnce.Do(func() { close(g.started) })
	select {
	case <-g.released:
		return catalog.Result{Value: map[string]any{"released": name}}, nil
	case <-ctx.Done():
		return catalog.Result{}, ctx.Err()
	}
}

// gates holds the toolkit's named gates, created on first mention and kept for the toolkit's
// lifetime.
type gates struct {
	mu     sync.Mutex
	byName map[string]*namedGate
}

type namedGate struct {
	released    chan struct{}
	releaseOnce sync.Once
	started     chan struct{}
	startOnce   sync.Once
}

func (gs *gates) get(name string) *namedGate {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.byName == nil {
		gs.byName = make(map[string]*namedGate)
	}
	g, ok := gs.byName[name]
	if !ok {
		g = &namedGate{released: make(chan struct{}), started: make(chan struct{})}
		gs.byName[name] = g
	}
	return g
}
