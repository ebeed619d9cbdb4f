package response

import (
	"context"
	"log/slog"
	"strconv"
	"sync"

	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/secretmask"
	"github.com/turncli/turncli/primary/events"
	"github.com/turncli/turncli/primary/store"
)

// Calls of functions that need confirmation (catalog.Traits.NeedsConfirmation).
//
// Dispatch saves the exact call (with the window's checkpoint) as waiting before it has any
// effect, marks the receipt waiting and blocks for as long as the response lives. An operator's
// decision is committed first and then handed to the call waiting on it, if one still waits
// (delivery). Whoever ends up holding a decision nobody waits for (the decider when no call
// waits, or a call whose response closed just as the decision arrived) settles it without a
// response: an approval runs the exact saved call in a fresh, short-lived response and tells
// the runtime through a continuation; a denial is told through a continuation. A call nobody
// decides within Settings.CallApprovalExpiry expires, which is delivered and settled like a
// denial (callapproval_expiry.go). Claiming
// (approved → claimed) is the one compare-and-swap that lets a call start, so no decision runs
// twice, whoever holds it.

// CallApprovalStore is what CallApprovals keeps durably.
type CallApprovalStore interface {
	store.CallApprovals
	store.Continuations
}

// CallApprovalConfig is what CallApprovals needs.
type CallApprovalConfig struct {
	Store CallApprovalStore
	// Notify wakes continuation subscribers after a transition enqueued a continuation.
	Notify func()
	// Events receives every change people should see live; nil publishes nothing.
	Events *events.Bus
	Logger *slog.Logger
}

// Live feed kinds of call approvals (subject store.CallApprovalSubject).
const (
	KindCallApprovalCreated  = "call_approval.created"
	KindCallApprovalDecided  = "call_approval.decided"
	KindCallApprovalClaimed  = "call_approval.claimed"
	KindCallApprovalFinished = "call_approval.finished"
)

// CallApprovals decides and recovers calls that need confirmation. It is safe for concurrent
// use.
type CallApprovals struct {
	cfg CallApprovalConfig
	mgr *Manager

	// ctx ends when the manager closes every response: recovered calls stop with it.
	ctx    context.Context
	cancel context.CancelFunc
	runs   sync.WaitGroup // recovered calls in flight

	mu      sync.Mutex
	waiters map[waiterKey]chan store.CallApproval // buffered 1; an entry is removed on delivery
	stopped bool
}

// waiterKey names a waiting call: call ids are unique within a response only.
type waiterKey struct{ response, call string }

// newCallApprovals is m's call approvals engine, recording in cfg.Store.
func newCallApprovals(m *Manager, cfg CallApprovalConfig) *CallApprovals {
	if cfg.Logger == nil {
		cfg.Logger = m.cfg.Logger
	}
	if cfg.Notify == nil {
		cfg.Notify = func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &CallApprovals{cfg: cfg, mgr: m, ctx: ctx, cancel: cancel, waiters: map[waiterKey]chan store.CallApproval{}}
}

// CallApprovals is the engine behind the operators' call approval methods; nil when the
// manager was built without Config.CallApprovals.
func (m *Manager) CallApprovals() *CallApprovals { return m.callApprovals }

// CallApproval returns one record.
func (c *CallApprovals) CallApproval(ctx context.Context, id int64) (store.CallApproval, error) {
	return c.cfg.Store.CallApproval(ctx, id)
}

// ListCallApprovals returns the records matching f, newest first.
func (c *CallApprovals) ListCallApprovals(ctx context.Context, f store.CallApprovalFilter) ([]store.CallApproval, error) {
	return c.cfg.Store.ListCallApprovals(ctx, f)
}

// CheckCallApprover refuses, as PERMISSION_DENIED, a person who may not approve a call: only
// an admin may. It is the rule's one home: Approve applies it to every caller, and a caller
// that wants the refusal before anything else about its request (the operator API) asks it
// first.
func CheckCallApprover(by store.Operator) error {
	if by.Role != store.RoleAdmin {
		return fault.Newf(fault.PermissionDenied, "only an admin can approve a call; operator %q is a %s", by.Name, by.Role)
	}
	return nil
}

// Approve approves a waiting call as by, who must be an admin (CheckCallApprover; nothing is
// read or changed otherwise). The call waiting on it runs it; when none waits (its response
// ended, or the primary restarted since) the exact saved call runs once in a fresh response,
// in the background, and a continuation reports it. store.ErrConflict when the record is not
// waiting (a replay): nothing changed.
func (c *CallApprovals) Approve(ctx context.Context, id int64, by store.Operator) (store.CallApproval, error) {
	if err := CheckCallApprover(by); err != nil {
		return store.CallApproval{}, err
	}
	rec, err := c.cfg.Store.ApproveCallApproval(ctx, id, by.Name)
	if err != nil {
		return store.CallApproval{}, err
	}
	c.publish(KindCallApprovalDecided, rec)
	c.cfg.Logger.Info("call approved", "call_approval", rec.ID, "call_id", rec.CallID, "by", by.Name)
	if !c.deliver(rec) {
		c.settleOrphan(rec)
	}
	return rec, nil
}

// Deny denies a waiting call as actor with note (may be empty: the call's error is then
// "Not approved by requester" when actor is its requester, or says another operator denied
// it; see notApprovedText). store.ErrConflict when the record is not waiting.
func (c *CallApprovals) Deny(ctx context.Context, id int64, actor, note string) (store.CallApproval, error) {
	rec, err := c.endUnrun(ctx, id, KindCallApprovalDecided,
		func(cur *store.CallApproval) {
			cur.Status, cur.Note, cur.DecidedBy = store.CallApprovalDenied, note, actor
		},
		func(tell []store.NewContinuation) (store.CallApproval, error) {
			return c.cfg.Store.DenyCallApproval(ctx, id, actor, note, tell...)
		})
	if err != nil {
		return store.CallApproval{}, err
	}
	c.cfg.Logger.Info("call denied", "call_approval", rec.ID, "call_id", rec.CallID, "by", actor)
	return rec, nil
}

// endUnrun ends waiting record id without running its call, as a denial or an expiry does.
// When no call waits on it now, the record as ended would leave it (set by ended) gives the
// continuation that tells the conversation, and write commits both together; otherwise write
// commits the record alone and the waiting call gets it. The feed is told with kind.
func (c *CallApprovals) endUnrun(ctx context.Context, id int64, kind string, ended func(*store.CallApproval),
	write func(tell []store.NewContinuation) (store.CallApproval, error)) (store.CallApproval, error) {
	var tell []store.NewContinuation
	if cur, err := c.cfg.Store.CallApproval(ctx, id); err == nil && !c.waiting(cur) {
		ended(&cur)
		tell = c.continuationFor(cur)
	}
	rec, err := write(tell)
	if err != nil {
		return store.CallApproval{}, err
	}
	if len(tell) > 0 {
		c.cfg.Notify()
	}
	c.publish(kind, rec)
	if !c.deliver(rec) {
		c.settleOrphan(rec)
	}
	return rec, nil
}

// register starts waiting for the decision on a call; cancel stops waiting and returns a
// decision delivered meanwhile, which the caller then holds.
func (c *CallApprovals) register(responseID, callID string) (decided <-chan store.CallApproval, cancel func() (store.CallApproval, bool)) {
	key := waiterKey{responseID, callID}
	ch := make(chan store.CallApproval, 1)
	c.mu.Lock()
	c.waiters[key] = ch
	c.mu.Unlock()
	return ch, func() (store.CallApproval, bool) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.waiters[key] == ch {
			delete(c.waiters, key)
			return store.CallApproval{}, false
		}
		select {
		case rec := <-ch:
			return rec, true
		default: // received by the waiter already
			return store.CallApproval{}, false
		}
	}
}

// waiting reports whether a call waits on rec now.
func (c *CallApprovals) waiting(rec store.CallApproval) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.waiters[waiterKey{rec.ResponseID, rec.CallID}]
	return ok
}

// deliver hands a decision to the call waiting on it; false when none waits.
func (c *CallApprovals) deliver(rec store.CallApproval) bool {
	key := waiterKey{rec.ResponseID, rec.CallID}
	c.mu.Lock()
	defer c.mu.Unlock()
	ch, ok := c.waiters[key]
	if !ok {
		return false
	}
	delete(c.waiters, key)
	ch <- rec // never blocks: buffered, and only one delivery per registration
	return true
}

// publish puts a record's change on the live feed (without its checkpoint).
func (c *CallApprovals) publish(kind string, rec store.CallApproval) {
	if c.cfg.Events == nil {
		return
	}
	c.cfg.Events.Publish(kind, store.CallApprovalSubject(rec.ID), map[string]any{
		"id": rec.ID, "status": string(rec.Status), "call_id": rec.CallID, "toolkit": rec.Toolkit,
		"function": rec.Function, "arguments": secretmask.MaskJSON(string(rec.Arguments), nil), "bash_call_id": rec.BashCallID,
		"response_id": rec.ResponseID, "agent": rec.Agent, "requester": rec.Requester, "channel": rec.Channel,
		"thread": rec.Thread, "decided_by": rec.DecidedBy, "note": rec.Note, "result_status": rec.Result.Status,
	})
}

// stop ends recovered calls and refuses new ones; wait joins them.
func (c *CallApprovals) stop() {
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
	c.cancel()
}

func (c *CallApprovals) wait() { c.runs.Wait() }

func callLogAttrs(rec store.CallApproval) []any {
	return []any{"call_approval", rec.ID, "call_id", rec.CallID, "toolkit", rec.Toolkit, "function", rec.Function,
		"response_id", rec.ResponseID, "status", string(rec.Status)}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
