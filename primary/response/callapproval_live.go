package response

import (
	"context"
	"errors"
	"time"

	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/store"
)

// Outcomes of calls that needed confirmation and did not run.
const (
	noConfirmation     = "This function needs a person's confirmation, which this primary cannot ask for; the call did not run"
	confirmationUnsent = "The call could not be saved for confirmation; it did not run"
	claimFailed        = "The approved call could not be started; it did not run"
	claimDeferred      = "The approved call could not be started now; it runs on its own and its result is reported to the conversation"
)

// storeTimeout bounds one store write made on a call's behalf after its response may be gone.
const storeTimeout = 10 * time.Second

// runConfirmed runs a call of a function that needs confirmation: the exact call is saved
// before anything else, the receipt waits for as long as the response lives, and the call runs
// only once approved and claimed.
func (r *Response) runConfirmed(callCtx context.Context, rc *receipt, w *Window, fn catalog.Resolved) (Status, []byte, []byte) {
	c := r.mgr.CallApprovals()
	if c == nil {
		return Failed, errorOutcome(noConfirmation), nil
	}
	decided, cancel := c.register(r.id, rc.id.String())
	// The receipt waits before the approval is saved: once saved, operators can see and decide
	// it, and whoever sees it waiting should find the receipt waiting too.
	progress{r: r, rc: rc}.Waiting()
	rec, err := c.cfg.Store.SaveCallApproval(r.ctx, store.NewCallApproval{
		CallID: rc.id.String(), Toolkit: rc.toolkit, Function: rc.function, Arguments: string(rc.args),
		BashCallID: w.bashCallID, ResponseID: r.id, Agent: r.spec.Agent, Requester: r.spec.Requester,
		Channel: r.spec.Channel, Thread: r.spec.Thread, WorkerKey: r.spec.WorkerKey, Checkpoint: w.checkpoint,
	})
	if err != nil {
		cancel()
		c.cfg.Logger.Error("call not saved for confirmation", "response_id", r.id, "call_id", rc.id.String(), "err", err)
		return Failed, errorOutcome(confirmationUnsent), nil
	}
	c.publish(KindCallApprovalCreated, rec)
	c.cfg.Logger.Info("call waits for confirmation", callLogAttrs(rec)...)

	// The expiry is committed like a decision and delivered to this wait like one, so a
	// decision that wins the race is what the call gets; a failed write leaves the record to
	// the sweep (RunCallApprovalExpiry), which delivers it here alike.
	timer, expired := r.mgr.cfg.Clock.NewTimer(r.mgr.cfg.Settings.CallApprovalExpiry)
	defer timer.Stop()
	for waiting := true; waiting; {
		select {
		case rec = <-decided:
			waiting = false
		case <-expired:
			ctx, done := context.WithTimeout(context.WithoutCancel(r.ctx), storeTimeout)
			if _, err := c.expire(ctx, rec.ID); err != nil && !errors.Is(err, store.ErrConflict) {
				c.cfg.Logger.Error("call approval not expired; the sweep retries", "call_approval", rec.ID, "err", err)
			}
			done()
		case <-r.ctx.Done():
			// The record stays waiting (or decided): still recoverable without this response.
			if held, ok := cancel(); ok {
				c.settleOrphan(held)
			}
			return Cancelled, errorOutcome(cancelledClosed), nil
		}
	}
	if r.ctx.Err() != nil { // closed as the decision arrived: settle it without the response
		c.settleOrphan(rec)
		return Cancelled, errorOutcome(cancelledClosed), nil
	}
	if rec.Status == store.CallApprovalDenied || rec.Status == store.CallApprovalExpired {
		return Failed, c.notApprovedOutcome(rec), nil
	}

	ctx, done := context.WithTimeout(context.WithoutCancel(r.ctx), storeTimeout)
	claimed, err := c.cfg.Store.ClaimCallApproval(ctx, rec.ID)
	done()
	switch {
	case errors.Is(err, store.ErrConflict):
		c.cfg.Logger.Error("approved call claimed elsewhere", "call_approval", rec.ID, "err", err)
		return Failed, errorOutcome(claimFailed), nil
	case err != nil:
		// Still approved: it runs on its own, as after a restart, and is reported then.
		c.cfg.Logger.Error("approved call not claimed; it runs without its command", "call_approval", rec.ID, "err", err)
		c.startRecovered(rec)
		return Failed, errorOutcome(claimDeferred), nil
	}
	rec = claimed
	c.publish(KindCallApprovalClaimed, rec)
	progress{r: r, rc: rc}.Running()
	status, outcome, attachments := r.invoke(callCtx, rc, w, fn)
	c.finish(rec, status, outcome, r.ctx.Err() != nil)
	return status, outcome, attachments
}

// finish records how a claimed call ended: done, or interrupted when its response closed
// while it ran (then nobody reads its receipt, so a continuation says what happened).
func (c *CallApprovals) finish(rec store.CallApproval, status Status, outcome []byte, interrupted bool) {
	to := store.CallApprovalDone
	res := store.CallResult{Status: status.String(), Outcome: string(clipOutcome(outcome))}
	var tell []store.NewContinuation
	if interrupted {
		to = store.CallApprovalInterrupted
		rec.Status, rec.Result = to, res
		tell = c.continuationFor(rec)
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	done, err := c.cfg.Store.FinishCallApproval(ctx, rec.ID, to, res, tell...)
	if err != nil {
		// Left claimed: the next boot settles it as interrupted, never re-running it.
		c.cfg.Logger.Error("call approval not finished", "call_approval", rec.ID, "err", err)
		return
	}
	if len(tell) > 0 {
		c.cfg.Notify()
	}
	c.publish(KindCallApprovalFinished, done)
	c.cfg.Logger.Info("confirmed call finished", append(callLogAttrs(done), "result", res.Status)...)
}

// clipOutcome keeps a recorded outcome within the store's bound (a receipt's outcome already
// is, with room to spare).
func clipOutcome(outcome []byte) []byte {
	if outcome == nil {
		return []byte("null")
	}
	if len(outcome) > store.MaxCallOutcome {
		return errorOutcome("outcome too large to record")
	}
	return outcome
}
