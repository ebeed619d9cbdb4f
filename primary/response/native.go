package response

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/turncli/turncli/primary/catalog"
)

// Native calls are the runtime's direct tool calls (ResponseService), the way an agent's
// engine calls tools beside its shell. They see the response's native catalog: every function
// of its toolkits, the interaction controls included (a clean response has no interaction
// toolkit), whatever the shell mode hides from Bash. They need no Bash command: they join the
// response's native window, which has no command and so never drains; it closes with the
// response. Otherwise they are receipts of the response like any other: the same call-id
// replay rules, the same 1024-receipt and 64-operation limits, fences and rebuilds, and
// operators see them. Their parent_bash_call_id is empty.

// nativeWindowLocked returns the native window, opening it on first use. A nested shell that a
// native call starts (shell.run_shell_command) gets its token like any window's, so that
// shell's own CLI calls join it.
func (r *Response) nativeWindowLocked() *Window {
	if r.native == nil {
		r.native = &Window{token: newWindowToken(), closed: make(chan struct{})}
		if r.windows == nil {
			r.windows = make(map[string]*Window)
			r.bashIDs = make(map[string]*Window)
		}
		r.windows[r.native.token] = r.native
	}
	return r.native
}

// CallNative admits a direct call of the runtime and returns its receipt: a new call queued,
// or a replay's current receipt (the same rules as Call, without the window). The call's
// dispatch continues the trace of ctx, the runtime's request.
func (r *Response) CallNative(ctx context.Context, req CallRequest) (ReceiptView, error) {
	var v ReceiptView
	if _, err := r.admitReceipt(ctx, "", req, admission{native: true}, func(rc *receipt) { v = rc.view() }); err != nil {
		return ReceiptView{}, err
	}
	return v, nil
}

// Receipt returns a copy of the receipt of call id, waiting first as GetCall does. It reads
// every receipt of the response, whichever window admitted it.
func (r *Response) Receipt(ctx context.Context, id uuid.UUID, wait time.Duration) (ReceiptView, error) {
	var v ReceiptView
	err := r.awaitReceipt(ctx, id, wait, func(rc *receipt) { v = rc.view() })
	return v, err
}

// Description is a function as the native catalog describes it.
type Description struct {
	// Descriptor is the canonical describe result, as the Agent CLI's (never replaced by a
	// context document: the runtime has no 64 KiB read).
	Descriptor []byte
	Traits     catalog.Traits
}

// DescribeNative describes toolkit.function of the native catalog, loading a deferred toolkit
// once. It is admitted like a native call and needs no window.
func (r *Response) DescribeNative(ctx context.Context, toolkit, function string) (Description, error) {
	fn, err := r.resolveAdmitted(ctx, "", admission{native: true}, toolkit, function)
	if err != nil {
		return Description{}, err
	}
	return Description{Descriptor: fn.Descriptor(), Traits: fn.Traits()}, nil
}

// ListNativeTools returns a page of the native catalog (the Agent CLI's page shape and cursors).
func (r *Response) ListNativeTools(cursor string, limit int) ([]byte, error) {
	view, err := r.discoveryView(true)
	if err != nil {
		return nil, err
	}
	return view.List(cursor, limit)
}

// SearchNativeTools searches the native catalog as SearchTools searches the Bash one.
func (r *Response) SearchNativeTools(query, toolkit string, limit int) ([]byte, error) {
	view, err := r.discoveryView(true)
	if err != nil {
		return nil, err
	}
	return view.Search(query, toolkit, limit)
}
