package response

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/turncli/turncli/internal/clierr"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/catalog"
)

// errResponseClosed is returned to the runtime for operations on a closed response.
var errResponseClosed = errors.New("response is closed")

// ErrClosed reports whether err means the response had already closed.
func ErrClosed(err error) bool { return errors.Is(err, errResponseClosed) }

// CallRequest is a parsed tools.call.
type CallRequest struct {
	ID       uuid.UUID
	Toolkit  string
	Function string
	// Arguments is the canonical JSON of the arguments object.
	Arguments []byte
}

// Call admits a tools.call into the window named by windowToken and returns its receipt.
//
// A call_id already known to the response is answered before any window check: the same
// operation gets its current receipt (even after its window closed, even without a window),
// a different one is refused. A new call is admitted only into an open or draining window of an
// unfenced response with a bound catalog, under the receipt and concurrency limits.
//
// A call that settles within the manager's Settings.FastCallBudget after admission is answered with
// its terminal receipt, so a client that polls needs no second request for a fast tool; any
// other call is answered as it stands when the budget passes (or when ctx ends).
func (r *Response) Call(ctx context.Context, windowToken string, req CallRequest) ([]byte, error) {
	// Admission takes microseconds under the response's lock: it is part of its request's span,
	// the parent of the call's dispatch, and gets no span of its own.
	var body []byte
	rc, err := r.admitReceipt(ctx, windowToken, req, admission{}, func(rc *receipt) { body = rc.appendJSON(nil) })
	if err != nil {
		return nil, err
	}
	if budget := r.mgr.cfg.Settings.EffectiveFastCallBudget(); budget > 0 {
		if settled := r.receiptWithin(ctx, rc, budget); settled != nil {
			body = settled
		}
	}
	return body, nil
}

// receiptWithin waits up to budget for rc to settle and returns its receipt then, or nil when
// it did not settle or the response closed meanwhile (the admission's receipt stands).
func (r *Response) receiptWithin(ctx context.Context, rc *receipt, budget time.Duration) []byte {
	select {
	case <-rc.done:
	default:
		timer := time.NewTimer(budget)
		defer timer.Stop()
		select {
		case <-rc.done:
		case <-timer.C:
			return nil
		case <-ctx.Done():
			return nil
		case <-r.ctx.Done():
			return nil
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	return rc.appendJSON(nil)
}

// admission says how a call or describe enters the response.
type admission struct {
	// native: a direct call of the runtime, in the native window and view (see native.go).
	native bool
	// approved: a person already approved this exact call (a recovered call), so it runs
	// without asking again.
	approved bool
}

// admitReceipt admits a call (see Call) and returns its receipt; the receipt of a replay is the
// one already held. read, when not nil, reads the receipt as admitted, under the response's
// lock: once dispatch starts, the receipt may move on at any moment. The span of ctx, the
// context the call is admitted in, parents the call's dispatch span.
func (r *Response) admitReceipt(ctx context.Context, windowToken string, req CallRequest, how admission, read func(*receipt)) (*receipt, error) {
	rc, queued, err := r.registerReceipt(windowToken, req, how, read)
	if err != nil || queued == nil {
		return rc, err
	}
	// The span starts on the admitting goroutine, outside the lock: a fresh goroutine's stack
	// is too small for the tracer and would be grown, and copied, to start it.
	dctx, span := r.startDispatch(ctx, rc)
	go r.dispatch(dctx, span, rc, queued.window, queued.view)
	return rc, nil
}

// queuedCall is where a newly admitted call runs: its window, and the catalog it resolves in.
type queuedCall struct {
	window *Window
	view   *catalog.View
}

// registerReceipt admits a call under the response's lock, reads its receipt with read (see
// admitReceipt), and returns the receipt and where to dispatch it when the call is new (nil for
// a replay). A new call's task is counted, so a closing response waits for its dispatch.
func (r *Response) registerReceipt(windowToken string, req CallRequest, how admission, read func(*receipt)) (*receipt, *queuedCall, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, nil, clierr.ErrUnauthenticated
	}
	if rc, ok := r.receipts[req.ID]; ok {
		if !rc.sameOperation(req.Toolkit, req.Function, req.Arguments) {
			return nil, nil, fault.New(fault.Conflict, clierr.CallIDConflict)
		}
		if read != nil {
			read(rc)
		}
		return rc, nil, nil
	}
	w, view, err := r.admitLocked(windowToken, how)
	if err != nil {
		return nil, nil, err
	}
	if len(r.receipts) >= MaxReceipts {
		return nil, nil, fault.New(fault.LimitExceeded, clierr.ReceiptLimit)
	}
	rc := &receipt{
		id: req.ID, toolkit: req.Toolkit, function: req.Function, args: req.Arguments,
		parent: w.bashCallID, status: Queued, done: make(chan struct{}), approved: how.approved,
		admittedAt: time.Now(),
	}
	// Known at once for a loaded toolkit; a deferred one's are set when dispatch loads it.
	rc.traits, _ = view.LoadedTraits(req.Toolkit, req.Function)
	if r.receipts == nil {
		r.receipts = make(map[uuid.UUID]*receipt)
	}
	r.receipts[req.ID] = rc
	w.receipts = append(w.receipts, rc)
	r.countAdmissionLocked(w)
	if read != nil {
		read(rc)
	}
	return rc, &queuedCall{window: w, view: view}, nil
}

// admitLocked finds the window a call or describe joins, and the catalog it sees, and checks
// that the response takes new work now. A native call joins the native window; any other
// names its window by token.
func (r *Response) admitLocked(windowToken string, how admission) (*Window, *catalog.View, error) {
	var w *Window
	view := r.view
	if how.native {
		w, view = r.nativeWindowLocked(), r.nativeView
	} else {
		if windowToken == "" {
			return nil, nil, fault.New(fault.Conflict, clierr.NoWindow)
		}
		var ok bool
		if w, ok = r.windows[windowToken]; !ok || w.state == windowClosed {
			return nil, nil, fault.New(fault.Conflict, clierr.WindowEnded)
		}
	}
	switch {
	case r.fenced:
		return nil, nil, fault.New(fault.Conflict, clierr.Fenced)
	case r.retired:
		return nil, nil, fault.New(fault.Conflict, clierr.CatalogRebuilding)
	case r.admitted >= MaxConcurrent:
		return nil, nil, fault.New(fault.LimitExceeded, clierr.ConcurrencyLimit)
	}
	return w, view, nil
}

// countAdmissionLocked counts admitted work against the window and the response, and registers the
// task the caller is about to start.
func (r *Response) countAdmissionLocked(w *Window) {
	w.pending++
	r.admitted++
	r.tasks.Add(1)
}

// settleLocked uncounts settled work; the window closes when it drained and nothing remains.
func (r *Response) settleLocked(w *Window) {
	w.pending--
	r.admitted--
	if w.state == windowDraining && w.pending == 0 {
		w.closeLocked()
	}
}

// Describe describes toolkit.function for a caller in the window named by windowToken. It is
// admitted like a call (it keeps the window from closing) and waits for its task. If the
// response closes meanwhile it fails at once with the uniform authentication error.
func (r *Response) Describe(ctx context.Context, windowToken, toolkit, function string) ([]byte, error) {
	fn, err := r.resolveAdmitted(ctx, windowToken, admission{}, toolkit, function)
	if err != nil {
		return nil, err
	}
	return r.describeResult(fn, toolkit, function)
}

// resolveAdmitted resolves toolkit.function (loading a deferred toolkit) as an admitted task of
// the window a describe joins, and waits for it.
func (r *Response) resolveAdmitted(ctx context.Context, windowToken string, how admission, toolkit, function string) (catalog.Resolved, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return catalog.Resolved{}, clierr.ErrUnauthenticated
	}
	w, view, err := r.admitLocked(windowToken, how)
	if err != nil {
		r.mu.Unlock()
		return catalog.Resolved{}, err
	}
	r.countAdmissionLocked(w)
	r.mu.Unlock()

	type answer struct {
		fn  catalog.Resolved
		err error
	}
	done := make(chan answer, 1)
	go func() {
		defer r.tasks.Done()
		fn, err := view.Resolve(r.ctx, toolkit, function)
		err = r.explainHidden(err, toolkit, function)
		r.mu.Lock()
		r.settleLocked(w)
		r.mu.Unlock()
		done <- answer{fn, err}
	}()
	select {
	case a := <-done:
		if r.ctx.Err() != nil { // closed meanwhile: the answer belongs to a response that is gone
			return catalog.Resolved{}, clierr.ErrUnauthenticated
		}
		return a.fn, a.err
	case <-r.ctx.Done():
		return catalog.Resolved{}, clierr.ErrUnauthenticated
	case <-ctx.Done():
		return catalog.Resolved{}, ctx.Err()
	}
}

// HasCall reports whether the response is open and holds a receipt for call id.
func (r *Response) HasCall(id uuid.UUID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.receipts[id]
	return ok && !r.closed
}

// GetCall returns the receipt of call id. With wait > 0 it first waits until the receipt is
// terminal, wait passes, or ctx ends.
func (r *Response) GetCall(ctx context.Context, id uuid.UUID, wait time.Duration) ([]byte, error) {
	var body []byte
	err := r.awaitReceipt(ctx, id, wait, func(rc *receipt) { body = rc.appendJSON(nil) })
	return body, err
}

// awaitReceipt waits as GetCall does, then calls read with the receipt under the response's
// mutex. An unknown call, or a response closed before or while waiting, is the uniform
// authentication error.
func (r *Response) awaitReceipt(ctx context.Context, id uuid.UUID, wait time.Duration, read func(*receipt)) error {
	r.mu.Lock()
	rc, ok := r.receipts[id]
	if r.closed || !ok {
		r.mu.Unlock()
		return clierr.ErrUnauthenticated
	}
	if wait > 0 && !rc.status.Terminal() {
		r.mu.Unlock()
		timer := time.NewTimer(wait)
		defer timer.Stop()
		r.mgr.parked.Add(1)
		defer r.mgr.parked.Add(-1)
		select {
		case <-rc.done:
		case <-timer.C:
		case <-r.ctx.Done():
			return clierr.ErrUnauthenticated
		case <-ctx.Done():
			return ctx.Err()
		}
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			return clierr.ErrUnauthenticated
		}
	}
	defer r.mu.Unlock()
	read(rc)
	return nil
}

// ListTools returns a page of the response's catalog.
func (r *Response) ListTools(cursor string, limit int) ([]byte, error) {
	view, err := r.discoveryView(false)
	if err != nil {
		return nil, err
	}
	return view.List(cursor, limit)
}

// SearchTools searches the response's catalog.
func (r *Response) SearchTools(query, toolkit string, limit int) ([]byte, error) {
	view, err := r.discoveryView(false)
	if err != nil {
		return nil, err
	}
	return view.Search(query, toolkit, limit)
}

// discoveryView is the catalog listing and searching walk: the Bash view, or the native one.
func (r *Response) discoveryView(native bool) (*catalog.View, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.closed:
		return nil, clierr.ErrUnauthenticated
	case r.retired:
		return nil, fault.New(fault.InvalidArgument, clierr.CatalogRebuilding)
	case native:
		return r.nativeView, nil
	}
	return r.view, nil
}
