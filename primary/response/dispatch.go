package response

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/turncli/turncli/internal/bashexec"
	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/primary/catalog"
)

// Outcomes of calls that never reached, or did not finish in, their tool.
const (
	cancelledFenced   = "Call cancelled before dispatch: the response is fenced"
	cancelledClosed   = "Call cancelled before dispatch: the response was closed"
	interruptedCalled = "Call interrupted after dispatch; effects may have occurred"
)

// dispatch runs one admitted call to its end. It owns the call from admission to settlement.
//
// ctx is the response's lifetime carrying the call's dispatch span, which dispatch ends.
func (r *Response) dispatch(ctx context.Context, span trace.Span, rc *receipt, w *Window, view *catalog.View) {
	defer r.tasks.Done()
	r.mu.Lock()
	switch {
	case r.closed:
		endDispatch(span, Cancelled)
		r.finishLocked(rc, w, Cancelled, errorOutcome(cancelledClosed), nil)
		r.mu.Unlock()
		return
	case r.fenced:
		endDispatch(span, Cancelled)
		r.finishLocked(rc, w, Cancelled, errorOutcome(cancelledFenced), nil)
		r.mu.Unlock()
		return
	}
	rc.status = Running
	r.mu.Unlock()

	status, outcome, attachments := r.run(ctx, rc, w, view)
	endDispatch(span, status)
	r.mu.Lock()
	r.finishLocked(rc, w, status, outcome, attachments)
	r.mu.Unlock()
}

// run resolves, validates and calls rc's function in ctx, the response's lifetime carrying the
// call's dispatch span.
func (r *Response) run(ctx context.Context, rc *receipt, w *Window, view *catalog.View) (Status, []byte, []byte) {
	fn, err := view.Resolve(ctx, rc.toolkit, rc.function)
	if err != nil {
		return Failed, errorOutcome(r.explainHidden(err, rc.toolkit, rc.function).Error()), nil
	}
	r.mu.Lock()
	rc.traits = fn.Traits()
	r.mu.Unlock()
	if err := fn.Validate(rc.args); err != nil {
		return Failed, errorOutcome(err.Error()), nil
	}
	if fn.Traits().NeedsConfirmation && !rc.approved {
		return r.runConfirmed(ctx, rc, w, fn)
	}
	return r.invoke(ctx, rc, w, fn)
}

// invoke calls the resolved function with the receipt's frozen arguments.
func (r *Response) invoke(ctx context.Context, rc *receipt, w *Window, fn catalog.Resolved) (Status, []byte, []byte) {
	args, err := canonjson.ParseObject(rc.args) // a private copy: the tool may keep or change it
	if err != nil {
		return Failed, errorOutcome(catalog.ErrInvalidArguments.Error()), nil
	}
	result, err := fn.Entry.Toolkit().Call(ctx, catalog.Call{
		ID: rc.id.String(), Toolkit: rc.toolkit, Function: rc.function, Arguments: args,
		Identity: r.identity, BashCallID: w.bashCallID,
		Progress: progress{r: r, rc: rc},
		Shell:    nestedShell{r: r, w: w},
		Lifetime: r.ctx,
	})
	switch {
	case ctx.Err() != nil:
		return Cancelled, errorOutcome(interruptedCalled), nil
	case err != nil:
		return Failed, errorOutcome(err.Error()), nil
	}
	var attachments []byte
	if len(result.Attachments) > 0 {
		attachments, err = canonjson.Marshal(budgetAttachments(result.Attachments))
		if err != nil {
			return Failed, errorOutcome("Tool returned invalid attachments"), nil
		}
	}
	return Completed, projectOutcome(result.Value), attachments
}

// finishLocked makes rc terminal and settles it against its window.
func (r *Response) finishLocked(rc *receipt, w *Window, s Status, outcome, attachments []byte) {
	rc.status = s
	rc.outcome = outcome
	rc.attachments = attachments
	close(rc.done)
	r.mgr.cfg.Observer.CallSettled(s, time.Since(rc.admittedAt))
	r.settleLocked(w)
}

// progress lets a running tool flip its receipt between running and waiting.
type progress struct {
	r  *Response
	rc *receipt
}

func (p progress) Waiting() { p.set(Waiting) }
func (p progress) Running() { p.set(Running) }

func (p progress) set(s Status) {
	p.r.mu.Lock()
	defer p.r.mu.Unlock()
	if !p.rc.status.Terminal() {
		p.rc.status = s
	}
}

// nestedShell runs a command for a call in the calling command's window, where the response
// runs its shells.
type nestedShell struct {
	r *Response
	w *Window
}

func (n nestedShell) RunNested(ctx context.Context, command string, timeout time.Duration, out bashexec.Output) (bashexec.Result, error) {
	return n.r.runShell(ctx, n.w, command, timeout, out)
}

// ErrShellUnavailable is returned when the response has no way to run shells.
var ErrShellUnavailable = errors.New("this response cannot run shell commands")

// runShell runs a command of the response in window w. It is counted in r.shells so Close
// waits for it to exit.
func (r *Response) runShell(ctx context.Context, w *Window, command string, timeout time.Duration, out bashexec.Output) (bashexec.Result, error) {
	if r.mgr.cfg.Shells == nil {
		return bashexec.Result{}, ErrShellUnavailable
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return bashexec.Result{}, errResponseClosed
	}
	r.shells.Add(1)
	r.mu.Unlock()
	defer r.shells.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(r.ctx, cancel)
	defer stop()
	ctx, span := r.startBash(ctx, w)
	res, err := r.mgr.cfg.Shells.Run(ctx, ShellCommand{
		ResponseID: r.id, Agent: r.spec.Agent, WorkerKey: r.spec.WorkerKey, Binding: &r.binding,
		Command: command, Timeout: timeout, AgentCLIEnv: r.agentCLIEnvNoURL(w),
	}, out)
	endBash(span, res, err)
	return res, err
}

// RunBash runs a command of the runtime in a new window (opened with opts) and returns after
// the command exited and its window drained and closed.
func (r *Response) RunBash(ctx context.Context, bashCallID, command string, timeout time.Duration, out bashexec.Output, opts ...WindowOption) (bashexec.Result, []ReceiptView, error) {
	w, err := r.OpenWindow(bashCallID, opts...)
	if err != nil {
		return bashexec.Result{}, nil, err
	}
	res, runErr := r.runShell(ctx, w, command, timeout, out)
	receipts := r.DrainWindow(w)
	return res, receipts, runErr
}

// MaxInlineAttachmentBytes bounds the URIs (typically data: URIs) a receipt carries in all, so
// a receipt with media still fits a client's 64 KiB read; URIs past it are left out, saying so.
const MaxInlineAttachmentBytes = 24 * 1024

// MaxAttachments bounds how many attachments one receipt lists, and maxAttachmentField the
// length of each of an attachment's texts, for the same reason.
const (
	MaxAttachments     = 16
	maxAttachmentField = 256
)

func budgetAttachments(in []catalog.Attachment) []catalog.Attachment {
	if len(in) > MaxAttachments {
		in = in[:MaxAttachments]
	}
	out := make([]catalog.Attachment, len(in))
	used := 0
	for i, a := range in {
		a.Kind, a.MimeType, a.Name = clip(a.Kind), clip(a.MimeType), clip(a.Name)
		if used+len(a.URI) > MaxInlineAttachmentBytes {
			a.Omitted = fmt.Sprintf("its %d-byte URI exceeds the receipt's %d-byte attachment budget", len(a.URI), MaxInlineAttachmentBytes)
			a.URI = ""
		}
		used += len(a.URI)
		out[i] = a
	}
	return out
}

func clip(s string) string {
	if len(s) <= maxAttachmentField {
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.ToValidUTF8(s[:maxAttachmentField], "") + "…"
}
