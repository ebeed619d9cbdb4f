package response

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/store"
)

// Decisions nobody waits for, and what a previous primary left.

// toolkitWait bounds how long a recovered call waits for its toolkit to be registered (a tool
// host reconnecting after a restart); past it the record stays approved for the next boot.
const (
	toolkitWait  = time.Minute
	toolkitCheck = 250 * time.Millisecond
)

// RecoverCallApprovals settles what the previous primary left, once at boot: every claimed
// call (started, maybe with effects) becomes interrupted, never re-run, with a continuation
// carrying its checkpoint; every approved call that never started runs once, in the
// background, like an approval given now. Waiting calls stay waiting for a decision. Without
// Config.CallApprovals it does nothing.
func (m *Manager) RecoverCallApprovals(ctx context.Context) error {
	c := m.CallApprovals()
	if c == nil {
		return nil
	}
	for {
		claimed, err := c.cfg.Store.ListCallApprovals(ctx, store.CallApprovalFilter{Status: store.CallApprovalClaimed, Limit: 1000})
		if err != nil {
			return err
		}
		for _, rec := range claimed {
			rec.Status = store.CallApprovalInterrupted
			rec.Result = store.CallResult{Status: Cancelled.String(), Outcome: string(errorOutcome(interruptedCalled))}
			done, err := c.cfg.Store.FinishCallApproval(ctx, rec.ID, rec.Status, rec.Result, c.continuationFor(rec)...)
			if err != nil {
				return fmt.Errorf("call approval %d: %w", rec.ID, err)
			}
			c.publish(KindCallApprovalFinished, done)
			c.cfg.Logger.Info("confirmed call interrupted by a restart", callLogAttrs(done)...)
		}
		if len(claimed) > 0 {
			c.cfg.Notify()
		}
		if len(claimed) < 1000 {
			break
		}
	}
	approved, err := c.cfg.Store.ListCallApprovals(ctx, store.CallApprovalFilter{Status: store.CallApprovalApproved, Limit: 1000})
	if err != nil {
		return err
	}
	for _, rec := range approved {
		c.startRecovered(rec)
	}
	return nil
}

// settleOrphan settles a decision no call waits for: an approval runs the exact call in a
// fresh response, a denial or an expiry is told through a continuation.
func (c *CallApprovals) settleOrphan(rec store.CallApproval) {
	switch rec.Status {
	case store.CallApprovalApproved:
		c.startRecovered(rec)
	case store.CallApprovalDenied, store.CallApprovalExpired:
		tell := c.continuationFor(rec)
		if len(tell) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		if _, created, err := c.cfg.Store.EnqueueContinuation(ctx, tell[0]); err != nil {
			c.cfg.Logger.Error("call that did not run not told", "call_approval", rec.ID, "err", err)
		} else if created {
			c.cfg.Notify()
		}
	}
}

// startRecovered runs an approved call without its response, in the background.
func (c *CallApprovals) startRecovered(rec store.CallApproval) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		c.cfg.Logger.Info("approved call left for the next start", callLogAttrs(rec)...)
		return
	}
	c.runs.Go(func() { c.runRecovered(rec) })
}

// runRecovered claims an approved call, runs exactly it in a fresh response and records the
// outcome together with the continuation that reports it.
func (c *CallApprovals) runRecovered(rec store.CallApproval) {
	if !c.awaitToolkit(rec.Toolkit) {
		c.cfg.Logger.Warn("approved call left approved: its toolkit is not registered", callLogAttrs(rec)...)
		return
	}
	if c.ctx.Err() != nil {
		return // shutting down: left approved, for the next primary to run
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	claimed, err := c.cfg.Store.ClaimCallApproval(ctx, rec.ID)
	cancel()
	if err != nil {
		if !errors.Is(err, store.ErrConflict) {
			c.cfg.Logger.Error("approved call not claimed", "call_approval", rec.ID, "err", err)
		}
		return // claimed by someone else, or left approved for the next boot
	}
	c.publish(KindCallApprovalClaimed, claimed)
	c.cfg.Logger.Info("approved call runs without its response", callLogAttrs(claimed)...)
	status, outcome := c.mgr.runExact(c.ctx, claimed)
	to := store.CallApprovalDone
	if c.ctx.Err() != nil {
		to = store.CallApprovalInterrupted
	}
	claimed.Status = to
	claimed.Result = store.CallResult{Status: status.String(), Outcome: string(clipOutcome(outcome))}
	ctx, cancel = context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	done, err := c.cfg.Store.FinishCallApproval(ctx, claimed.ID, to, claimed.Result, c.continuationFor(claimed)...)
	if err != nil {
		c.cfg.Logger.Error("call approval not finished", "call_approval", claimed.ID, "err", err)
		return
	}
	c.cfg.Notify()
	c.publish(KindCallApprovalFinished, done)
	c.cfg.Logger.Info("approved call finished without its response", append(callLogAttrs(done), "result", claimed.Result.Status)...)
}

// awaitToolkit waits until the toolkit is registered, the bound passes or the manager stops.
func (c *CallApprovals) awaitToolkit(name string) bool {
	deadline := time.NewTimer(toolkitWait)
	defer deadline.Stop()
	tick := time.NewTicker(toolkitCheck)
	defer tick.Stop()
	for {
		if _, ok := c.mgr.cfg.Registry.Lookup(name); ok {
			return true
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return false
		case <-c.ctx.Done():
			return false
		}
	}
}

// runExact runs exactly the saved call in a fresh, short-lived response with the call's
// identity (origin recovery): no Bash command runs, only the call, already approved. The
// response closes when the call ends, or when ctx ends (then the call is interrupted).
func (m *Manager) runExact(ctx context.Context, rec store.CallApproval) (Status, []byte) {
	spec := Spec{
		Agent: rec.Agent, Requester: rec.Requester, Channel: rec.Channel, Thread: rec.Thread,
		ShellMode: ShellModeMinimal, WorkerKey: rec.WorkerKey, Origin: OriginRecovery,
	}
	if catalog.ValidPattern(rec.Toolkit) {
		spec.Toolkits = []string{rec.Toolkit}
	}
	id, err := uuid.Parse(rec.CallID)
	if err != nil {
		return Failed, errorOutcome("The saved call id is not a UUID; the call did not run")
	}
	r, err := m.Open(spec)
	if err != nil {
		return Failed, errorOutcome("The call could not be run again: " + err.Error())
	}
	defer r.Close()
	stop := context.AfterFunc(ctx, r.Close)
	defer stop()
	bashCallID := rec.BashCallID
	if bashCallID == "" {
		bashCallID = "recovery"
	}
	w, err := r.OpenWindow(bashCallID)
	if err != nil {
		return Cancelled, errorOutcome(interruptedCalled)
	}
	rc, err := r.admitReceipt(r.ctx, w.token, CallRequest{ID: id, Toolkit: rec.Toolkit, Function: rec.Function, Arguments: []byte(rec.Arguments)}, admission{approved: true}, nil)
	if err != nil {
		return Failed, errorOutcome("The call could not be admitted again; it did not run")
	}
	r.DrainWindow(w) // no command runs: the window closes once the call settled
	r.mu.Lock()
	defer r.mu.Unlock()
	if !rc.status.Terminal() { // the response closed before the call was dispatched
		return Cancelled, errorOutcome(interruptedCalled)
	}
	return rc.status, rc.outcome
}

// continuationFor is the continuation that tells the runtime how a call nobody waits for
// ended (rec as it ends), carrying the checkpoint of the Bash command that made it; none when
// the call has no conversation to resume.
func (c *CallApprovals) continuationFor(rec store.CallApproval) []store.NewContinuation {
	if rec.Channel == "" {
		c.cfg.Logger.Warn("call approval has no conversation to tell", callLogAttrs(rec)...)
		return nil
	}
	return []store.NewContinuation{{
		IdempotencyKey: CallContinuationKey(rec), Channel: rec.Channel, Thread: rec.Thread,
		Text: c.report(rec), Checkpoint: rec.Checkpoint,
	}}
}

// maxReportArguments bounds the arguments quoted in a report.
const maxReportArguments = 4096

// report is the text of a call's continuation: the call, its outcome, and that the Bash
// command that made it was interrupted and not resumed.
func (c *CallApprovals) report(rec store.CallApproval) string {
	args := rec.Arguments
	if len(args) > maxReportArguments {
		cut := maxReportArguments
		for cut > 0 && !utf8.RuneStart(args[cut]) {
			cut--
		}
		args = args[:cut] + "…"
	}
	call := fmt.Sprintf("The call %s.%s (call id %s) with arguments %s", rec.Toolkit, rec.Function, rec.CallID, args)
	var what string
	switch rec.Status {
	case store.CallApprovalDone:
		what = fmt.Sprintf("%s was approved by %s and ran once, on its own: it %s with outcome %s.",
			call, rec.DecidedBy, rec.Result.Status, rec.Result.Outcome)
	case store.CallApprovalInterrupted:
		what = fmt.Sprintf("%s was approved by %s and had started when it was interrupted; it was not run again and "+
			"may have had effects. It ended %s with outcome %s.", call, rec.DecidedBy, rec.Result.Status, rec.Result.Outcome)
	case store.CallApprovalDenied:
		what = fmt.Sprintf("%s was not approved and did not run: %s.", call, c.notApprovedText(rec))
	case store.CallApprovalExpired:
		what = fmt.Sprintf("%s was not decided in time and did not run: %s.", call, c.notApprovedText(rec))
	default:
		what = fmt.Sprintf("%s is %s.", call, rec.Status)
	}
	return what + fmt.Sprintf(" The Bash command that made the call (bash call id %s) was interrupted and not resumed; "+
		"nothing else from it ran again.", rec.BashCallID)
}

// CallContinuationKey is the idempotency key of the continuation that reports a confirmed
// call: call ids are unique only within their response, so the response is part of it.
func CallContinuationKey(rec store.CallApproval) string {
	return "call:" + rec.ResponseID + "/" + rec.CallID
}
