// Package lifecycle stops what a constructor built, in an order that follows from how it was
// built: each component registers its stop as it is constructed, in one of a few phases, and
// Stop runs the phases in order and, within a phase, the stops in reverse construction order.
// A constructor that fails part way runs Stop too, so what it built is stopped and nothing
// else.
//
// It owns no component and knows none: names are for logs and tests.
package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Phase is a step of a shutdown. Phases run in their order; a component's phase says what must
// have stopped before it may stop.
type Phase int

const (
	// Unready comes first: readiness reports not ready (/readyz 503, gRPC health
	// NOT_SERVING), so load balancers and workers look elsewhere before anything stops.
	Unready Phase = iota
	// Intake stops taking work in: endless streams (subscriptions, event watches) end, so the
	// steps below wait for nobody's subscription.
	Intake
	// Work ends the work in flight: jobs stop being supervised, responses close (revoking
	// grants, stopping commands, answering long polls), sandboxes are released.
	Work
	// Connections ends what clients hold open that no request bounds: worker connections,
	// tool host streams, MCP servers. It follows Work so their calls were cancelled while the
	// other end could hear it.
	Connections
	// Servers stops the listeners' servers gracefully (bounded), now that nothing in flight
	// holds them.
	Servers
	// State closes what everything above could write to: the store.
	State
	phases
)

var phaseNames = [phases]string{"unready", "intake", "work", "connections", "servers", "state"}

func (p Phase) String() string {
	if p < 0 || p >= phases {
		return fmt.Sprintf("Phase(%d)", int(p))
	}
	return phaseNames[p]
}

// Stop stops one component; ctx bounds it (a graceful stop turns hard when ctx ends).
type Stop func(ctx context.Context) error

type entry struct {
	name  string
	phase Phase
	stop  Stop
}

// Stops is the stops registered so far. The zero value is ready to use; it is safe for use by
// one constructor at a time.
type Stops struct {
	mu      sync.Mutex
	entries []entry
	stopped bool
}

// Add registers the stop of the component just built, in phase.
func (s *Stops) Add(phase Phase, name string, stop Stop) {
	if phase < 0 || phase >= phases {
		panic(fmt.Sprintf("lifecycle: %s in unknown %v", name, phase))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries = append(s.entries, entry{name: name, phase: phase, stop: stop})
}

// Order is the names in the order Stop runs them.
func (s *Stops) Order() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for _, e := range s.ordered() {
		names = append(names, e.name)
	}
	return names
}

// ordered is the entries by phase, each phase in reverse registration order.
func (s *Stops) ordered() []entry {
	out := make([]entry, 0, len(s.entries))
	for phase := range phases {
		for i := len(s.entries) - 1; i >= 0; i-- {
			if s.entries[i].phase == phase {
				out = append(out, s.entries[i])
			}
		}
	}
	return out
}

// Stop runs every stop once, in Order, each with ctx; a failing stop does not keep the others
// from running. It returns the failures, each naming its component. Later calls do nothing.
func (s *Stops) Stop(ctx context.Context) error {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return nil
	}
	s.stopped = true
	entries := s.ordered()
	s.mu.Unlock()
	var errs []error
	for _, e := range entries {
		if err := e.stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop %s: %w", e.name, err))
		}
	}
	return errors.Join(errs...)
}
