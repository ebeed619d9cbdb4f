package response

import (
	"cmp"
	"slices"
	"time"
)

// Inspection is a copy of a live response's state for people (the operator API): what it was
// opened with, where its shells run, its windows and its latest receipts. It never holds the
// grant, a window token or a call's arguments.
type Inspection struct {
	ID        string
	Agent     string
	Requester string
	Channel   string
	Thread    string
	Origin    string
	Flags     []string
	ShellMode string
	// WorkerKey names the workers that run the response's shells; empty for the primary's own
	// host. BoundWorker is the worker it is bound to, empty while none is.
	WorkerKey   string
	BoundWorker string
	// GrantExpires is when the grant stops working.
	GrantExpires time.Time
	// Closing is set once Close has begun; Fenced while the response refuses new calls.
	Closing bool
	Fenced  bool
	// Unsettled counts admitted calls and describes that have not settled yet.
	Unsettled int
	// Windows are every window the response opened, open ones first (see byRecency).
	Windows []WindowInspection
	// ReceiptCount is how many receipts the response holds; Receipts are at most the number
	// Inspect was asked for of them, the latest first (see byRecency).
	ReceiptCount int
	Receipts     []ReceiptInspection
}

// WindowInspection is one window of an inspected response.
type WindowInspection struct {
	// BashCallID is the runtime's id of the window's command; empty for the native window,
	// which holds the runtime's direct calls and stays open while the response lives.
	BashCallID string
	// State is "open" (its command runs), "draining" (its command exited; admitted work is
	// settling) or "closed".
	State string
	// Admitted counts the calls the window admitted; Unsettled those of its calls and
	// describes not settled yet.
	Admitted  int
	Unsettled int
}

// ReceiptInspection is one receipt of an inspected response.
type ReceiptInspection struct {
	CallID   string
	Toolkit  string
	Function string
	Status   Status
	// Parent is the Bash call id of the window that admitted the call.
	Parent string
	// Outcome is the canonical JSON of the outcome, "null" until the call is terminal. It
	// shares the receipt's bytes, which never change once set: do not modify it.
	Outcome []byte
}

var windowStateNames = [...]string{windowOpen: "open", windowDraining: "draining", windowClosed: "closed"}

// List returns the live responses, ordered by id.
func (m *Manager) List() []*Response {
	m.mu.Lock()
	all := make([]*Response, 0, len(m.byID))
	for _, r := range m.byID {
		all = append(all, r)
	}
	m.mu.Unlock()
	slices.SortFunc(all, func(a, b *Response) int { return cmp.Compare(a.id, b.id) })
	return all
}

// Inspect returns a copy of the response's state with at most maxReceipts receipts (none when
// maxReceipts ≤ 0). It holds the response's mutex only while copying, and never waits for
// calls or commands.
//
// Windows and receipts record no times, so the latest receipts are chosen by what is known
// (byRecency): windows whose command still runs or drains come before closed ones, and each
// window's receipts are taken newest admitted first.
func (r *Response) Inspect(maxReceipts int) Inspection {
	in := Inspection{
		ID:           r.id,
		Agent:        r.identity.Agent,
		Requester:    r.identity.Requester,
		Channel:      r.identity.Channel,
		Thread:       r.identity.Thread,
		Origin:       r.identity.Origin,
		Flags:        slices.Clone(r.identity.Flags),
		WorkerKey:    r.identity.WorkerKey,
		BoundWorker:  r.binding.WorkerID(), // the binding has its own lock; never taken under mu
		GrantExpires: r.expires,
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	in.ShellMode = r.spec.ShellMode
	in.Closing = r.closed
	in.Fenced = r.fenced
	in.Unsettled = r.admitted
	in.ReceiptCount = len(r.receipts)
	windows := make([]*Window, 0, len(r.bashIDs)+1)
	for _, w := range r.bashIDs {
		windows = append(windows, w)
	}
	if r.native != nil {
		windows = append(windows, r.native)
	}
	slices.SortFunc(windows, byRecency)
	in.Windows = make([]WindowInspection, len(windows))
	for i, w := range windows {
		in.Windows[i] = WindowInspection{
			BashCallID: w.bashCallID, State: windowStateNames[w.state], Admitted: len(w.receipts), Unsettled: w.pending,
		}
	}
	if r.receipts == nil { // closed: the receipts were dropped
		return in
	}
	for _, w := range windows {
		for i := len(w.receipts) - 1; i >= 0 && len(in.Receipts) < maxReceipts; i-- {
			rc := w.receipts[i]
			v := rc.view()
			in.Receipts = append(in.Receipts, ReceiptInspection{
				CallID: v.CallID, Toolkit: v.Toolkit, Function: v.Function, Status: v.Status, Parent: v.Parent, Outcome: v.Outcome,
			})
		}
	}
	return in
}

// byRecency orders windows as recent activity is known: open, then draining, then closed
// windows, and by Bash call id among windows in the same state.
func byRecency(a, b *Window) int {
	return cmp.Or(cmp.Compare(a.state, b.state), cmp.Compare(a.bashCallID, b.bashCallID))
}
