package response

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/grant"
)

// Per-response limits (contract section 11).
const (
	MaxReceipts   = 1024
	MaxConcurrent = 64
)

// Response is one reply turn. All mutable state is guarded by mu.
type Response struct {
	id       string
	spec     Spec
	identity catalog.Identity
	mgr      *Manager
	digest   grant.Digest
	expires  time.Time
	// token is the grant itself. The grant index keeps only its digest; the response keeps the
	// token solely to place it in the environment of its own shells.
	token string
	// mcpDigest is the digest of the gateway MCP credential, once mcpIssued (mcpcredential.go);
	// both are guarded by mu.
	mcpDigest grant.Digest
	mcpIssued bool
	// credential is the key of the runtime credential that opened the response, empty for
	// those the primary opened itself.
	credential string
	// binding is the worker this response's shells run on (worker-keyed responses only).
	binding Binding

	// ctx ends when the response closes; every task and shell of the response derives from it.
	ctx       context.Context
	cancel    context.CancelFunc
	tasks     sync.WaitGroup // admitted calls and describes
	shells    sync.WaitGroup // running Bash commands
	closeOnce sync.Once

	mu      sync.Mutex
	closed  bool
	fenced  bool
	retired bool
	view    *catalog.View // what the response's shells see (the Bash-side catalog)
	// nativeView is what the runtime offers its model as direct tool calls (see native.go).
	nativeView *catalog.View
	// native is the window of the runtime's direct calls, opened on the first one.
	native   *Window
	windows  map[string]*Window // by window token
	bashIDs  map[string]*Window // by Bash call id
	receipts map[uuid.UUID]*receipt
	admitted int // calls and describes admitted and not settled
	docs     documents
}

// ID is the response's id.
func (r *Response) ID() string { return r.id }

// Spec is what the response was opened with.
func (r *Response) Spec() Spec { return r.spec }

// GrantExpires is when the response's grant stops working.
func (r *Response) GrantExpires() time.Time { return r.expires }

// grantee is what a response's grant resolves to: the response, and whether its shells are
// local, kept beside it in the grant index so that resolving a local shell's grant touches
// only the index (with many live responses, each one touched is a cache miss).
type grantee struct {
	r     *Response
	local bool
}

func (r *Response) grantee() grantee { return grantee{r: r, local: r.spec.WorkerKey == ""} }

// accepts reports whether a request on path p may use the grant: local shells' on the
// primary's own listener, a worker's shells' only through the worker the response is bound to.
func (g grantee) accepts(p Path) bool {
	if g.local {
		return p == LocalPath
	}
	bound := g.r.binding.WorkerID()
	return p.WorkerKey == g.r.spec.WorkerKey && bound != "" && p.WorkerID == bound
}

// Fence makes every window refuse new calls and describes from the next request on; queued
// calls are cancelled when they reach dispatch.
func (r *Response) Fence() {
	r.mu.Lock()
	r.fenced = true
	r.mu.Unlock()
}

// RetireCatalog marks the catalog as being rebuilt until RebindCatalog.
func (r *Response) RetireCatalog() {
	r.mu.Lock()
	r.retired = true
	r.mu.Unlock()
}

// views are the catalogs the response offers for patterns, as its identity sees them. The
// native view (the runtime's direct tool calls) has every function; the Bash view of a
// standard-mode response only those without traits, which finish inside the command. A clean
// response offers the interaction toolkit in neither.
func (r *Response) views(patterns []string) (bash, native *catalog.View) {
	native = r.mgr.cfg.Registry.Snapshot(patterns).For(r.identity)
	if r.spec.HasFlag(FlagClean) {
		native = native.Without(InteractionToolkit)
	}
	bash = native
	if r.spec.ShellMode != ShellModeMinimal {
		bash = native.Standard()
	}
	return bash, native
}

// Binding is the worker this response's shells run on (worker-keyed responses).
func (r *Response) Binding() *Binding { return &r.binding }

// Identity is on whose behalf the response's calls run.
func (r *Response) Identity() catalog.Identity { return r.identity }

// RebindCatalog takes a fresh catalog snapshot (with a new selection if patterns is not empty)
// and lifts the retirement and any fence.
func (r *Response) RebindCatalog(patterns []string) error {
	if len(patterns) > 0 {
		s := Spec{Agent: r.spec.Agent, Toolkits: patterns}
		if err := s.Validate(); err != nil {
			return err
		}
	} else {
		patterns = r.spec.Toolkits
	}
	view, native := r.views(patterns)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.view, r.nativeView = view, native
	r.spec.Toolkits = patterns
	r.retired = false
	r.fenced = false
	return nil
}

// Close ends the response: the grant (and the gateway MCP credential) is revoked first, then admitted work is cancelled and
// joined, then windows close and receipts are dropped. It returns when all of that is done,
// including the exit of the response's shells. Closing again is a no-op.
func (r *Response) Close() {
	r.closeOnce.Do(func() {
		r.mgr.grants.Revoke(r.digest)
		r.mu.Lock()
		r.closed = true
		r.revokeMCPLocked()
		r.mu.Unlock()
		r.cancel()
		r.tasks.Wait()
		r.shells.Wait()
		if r.mgr.cfg.Shells != nil {
			r.mgr.cfg.Shells.Release(r.spec.WorkerKey, &r.binding, r.id)
		}
		r.mu.Lock()
		for _, w := range r.windows {
			w.closeLocked()
		}
		r.receipts = nil
		r.docs = documents{}
		r.mu.Unlock()
		r.mgr.forget(r)
		r.mgr.cfg.Logger.Info("response closed", "response_id", r.id)
	})
}

// Closed reports whether Close has begun.
func (r *Response) Closed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}
