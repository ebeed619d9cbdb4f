package toolhost

import (
	"context"
	"fmt"
	"sync"

	"github.com/turncli/turncli/primary/catalog"
)

// Why a hosted toolkit is unavailable.
const (
	whyDisconnected = "its tool host disconnected"
	whyStopping     = "its tool host is stopping"
)

// unavailable is the failure of a load or call of a toolkit no live host serves.
func unavailable(toolkit, why string) error {
	return fmt.Errorf("Toolkit %q is unavailable: %s", toolkit, why)
}

// hostedToolkit is a toolkit tool hosts serve. Its catalog entry lives as long as the primary;
// the host serving it changes as hosts come, drain and go.
type hostedToolkit struct {
	name        string
	description string // of the first registration: the catalog entry keeps that one
	entry       *catalog.Entry

	mu       sync.Mutex
	host     *conn  // nil while no host serves it
	prev     *conn  // the host that served it last, while host is nil
	why      string // why it is unavailable while host is nil
	deferred bool
	def      catalog.Definition // of an eager registration
}

var _ catalog.Toolkit = (*hostedToolkit)(nil)

func (t *hostedToolkit) Name() string        { return t.name }
func (t *hostedToolkit) Description() string { return t.description }

// Deferred reports whether the current registration is deferred.
func (t *hostedToolkit) Deferred() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.deferred
}

// Load returns an eager registration's definition, or asks the serving host for a deferred
// toolkit's.
func (t *hostedToolkit) Load(ctx context.Context) (catalog.Definition, error) {
	t.mu.Lock()
	host, why, deferred, def := t.host, t.why, t.deferred, t.def
	t.mu.Unlock()
	if !deferred {
		return def, nil
	}
	if host == nil {
		return catalog.Definition{}, unavailable(t.name, why)
	}
	return host.load(ctx, t.name)
}

// Call runs the call on the host serving the toolkit now.
func (t *hostedToolkit) Call(ctx context.Context, call catalog.Call) (catalog.Result, error) {
	t.mu.Lock()
	host, why := t.host, t.why
	t.mu.Unlock()
	if host == nil {
		return catalog.Result{}, unavailable(t.name, why)
	}
	return host.call(ctx, call)
}

// holder is the host serving the toolkit, nil when none does.
func (t *hostedToolkit) holder() *conn {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.host
}

// setRegistration replaces the registration while no host serves the toolkit.
func (t *hostedToolkit) setRegistration(r registration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.deferred, t.def = r.deferred, r.def
}

// attach makes c the serving host unless c's connection has already ended.
func (t *hostedToolkit) attach(c *conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c.ctx.Err() != nil {
		return false
	}
	t.host, t.prev, t.why = c, nil, ""
	return true
}

// release makes the toolkit unavailable for why if c serves it, or updates why if c was the
// last to serve it (a drained host that has now disconnected).
func (t *hostedToolkit) release(c *conn, why string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.host == c:
		t.host, t.prev, t.why = nil, c, why
	case t.host == nil && t.prev == c:
		t.why = why
	}
}

// staticToolkit validates a registration by registering it in a scratch registry, so a broken
// definition is refused before it replaces a working one.
type staticToolkit struct {
	name     string
	deferred bool
	def      catalog.Definition
}

func (s staticToolkit) Name() string        { return s.name }
func (s staticToolkit) Description() string { return "" }
func (s staticToolkit) Deferred() bool      { return s.deferred }
func (s staticToolkit) Load(context.Context) (catalog.Definition, error) {
	return s.def, nil
}
func (s staticToolkit) Call(context.Context, catalog.Call) (catalog.Result, error) {
	return catalog.Result{}, fmt.Errorf("toolkit %q is a scratch copy", s.name)
}
