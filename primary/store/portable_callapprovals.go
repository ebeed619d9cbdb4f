package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// maxCallName bounds each name of a call approval (toolkit, ids, conversation), in bytes.
const maxCallName = 1024

func checkNewCallApproval(c NewCallApproval) error {
	if u, err := uuid.Parse(c.CallID); err != nil || u.String() != c.CallID {
		return invalid("a call approval needs its call id as a canonical UUID")
	}
	for _, f := range []struct{ name, v string }{{"toolkit", c.Toolkit}, {"function", c.Function},
		{"response id", c.ResponseID}, {"agent", c.Agent}} {
		if f.v == "" {
			return invalid("a call approval needs its %s", f.name)
		}
	}
	for _, f := range []string{c.Toolkit, c.Function, c.BashCallID, c.ResponseID, c.Agent, c.Requester, c.Channel, c.Thread, c.WorkerKey} {
		if !utf8.ValidString(f) || len(f) > maxCallName {
			return invalid("a call approval's names must be UTF-8 of at most %d bytes", maxCallName)
		}
	}
	switch {
	case len(c.Arguments) > MaxCallArguments:
		return invalid("a call approval's arguments exceed %d bytes", MaxCallArguments)
	case !json.Valid([]byte(c.Arguments)) || !strings.HasPrefix(c.Arguments, "{"):
		return invalid("a call approval's arguments must be a JSON object")
	case len(c.Checkpoint) > MaxCheckpoint:
		return invalid("a checkpoint exceeds %d bytes", MaxCheckpoint)
	}
	return nil
}

// SaveCallApproval implements CallApprovals.
func (p *Portable) SaveCallApproval(ctx context.Context, c NewCallApproval) (CallApproval, error) {
	if err := checkNewCallApproval(c); err != nil {
		return CallApproval{}, err
	}
	if len(c.Checkpoint) == 0 {
		c.Checkpoint = nil
	}
	at := p.clock()
	var out CallApproval
	err := p.update(ctx, func(tx Tx) error {
		id, err := tx.InsertCallApproval(ctx, CallApproval{NewCallApproval: c, Status: CallApprovalWaiting, CreatedAt: at})
		if errors.Is(err, ErrExists) {
			return fmt.Errorf("%w: response %s already saved call %s", ErrConflict, c.ResponseID, c.CallID)
		} else if err != nil {
			return err
		}
		tellThread(ctx, tx, ThreadCallApproval, id, ThreadOpened, at)
		if err := callAudit(ctx, tx, at, primaryActor, ActionCallApprovalRequest, id, c.CallID, map[string]any{
			"toolkit": c.Toolkit, "function": c.Function, "response_id": c.ResponseID,
		}); err != nil {
			return err
		}
		out, err = tx.CallApproval(ctx, id)
		return err
	})
	return out, err
}

// CallApproval implements CallApprovals.
func (p *Portable) CallApproval(ctx context.Context, id int64) (CallApproval, error) {
	return p.d.CallApproval(ctx, id)
}

// ListCallApprovals implements CallApprovals.
func (p *Portable) ListCallApprovals(ctx context.Context, f CallApprovalFilter) ([]CallApproval, error) {
	var err error
	if f.Limit, err = listLimit(f.Limit); err != nil {
		return nil, err
	}
	if f.Status != "" && !f.Status.Valid() {
		return nil, invalid("call approval status %q is unknown", f.Status)
	}
	if err := checkBeforeID(f.BeforeID); err != nil {
		return nil, err
	}
	return p.d.ListCallApprovals(ctx, f)
}

// ApproveCallApproval implements CallApprovals.
func (p *Portable) ApproveCallApproval(ctx context.Context, id int64, actor string) (CallApproval, error) {
	if actor == "" {
		return CallApproval{}, invalid("an approval needs an actor")
	}
	at := p.clock()
	return p.stepCall(ctx, id, "approve", CallApprovalWaiting, at, func(c *CallApproval) {
		c.Status, c.DecidedBy, c.DecidedAt = CallApprovalApproved, actor, at
	}, actor, ActionCallApprovalApprove, nil)
}

// DenyCallApproval implements CallApprovals.
func (p *Portable) DenyCallApproval(ctx context.Context, id int64, actor, note string, tell ...NewContinuation) (CallApproval, error) {
	if actor == "" {
		return CallApproval{}, invalid("a denial needs an actor")
	}
	if err := checkBytes("a note", note, 0); err != nil {
		return CallApproval{}, err
	}
	at := p.clock()
	return p.stepCall(ctx, id, "deny", CallApprovalWaiting, at, func(c *CallApproval) {
		c.Status, c.DecidedBy, c.DecidedAt, c.Note, c.SettledAt = CallApprovalDenied, actor, at, note, at
	}, actor, ActionCallApprovalDeny, map[string]any{"note": note}, tell...)
}

// ExpireCallApproval implements CallApprovals.
func (p *Portable) ExpireCallApproval(ctx context.Context, id int64, tell ...NewContinuation) (CallApproval, error) {
	at := p.clock()
	return p.stepCall(ctx, id, "expire", CallApprovalWaiting, at, func(c *CallApproval) {
		c.Status, c.SettledAt = CallApprovalExpired, at
	}, primaryActor, ActionCallApprovalExpire, nil, tell...)
}

// ClaimCallApproval implements CallApprovals.
func (p *Portable) ClaimCallApproval(ctx context.Context, id int64) (CallApproval, error) {
	at := p.clock()
	return p.stepCall(ctx, id, "claim", CallApprovalApproved, at, func(c *CallApproval) {
		c.Status, c.ClaimedAt = CallApprovalClaimed, at
	}, primaryActor, ActionCallApprovalClaim, nil)
}

// FinishCallApproval implements CallApprovals.
func (p *Portable) FinishCallApproval(ctx context.Context, id int64, to CallApprovalStatus, res CallResult, tell ...NewContinuation) (CallApproval, error) {
	if to != CallApprovalDone && to != CallApprovalInterrupted {
		return CallApproval{}, invalid("a claimed call ends done or interrupted, not %q", to)
	}
	switch res.Status {
	case "completed", "failed", "cancelled":
	default:
		return CallApproval{}, invalid("a call result's status must be completed, failed or cancelled, not %q", res.Status)
	}
	if len(res.Outcome) > MaxCallOutcome || !utf8.ValidString(res.Outcome) {
		return CallApproval{}, invalid("a call outcome must be UTF-8 of at most %d bytes", MaxCallOutcome)
	}
	at := p.clock()
	return p.stepCall(ctx, id, "finish", CallApprovalClaimed, at, func(c *CallApproval) {
		c.Status, c.Result, c.SettledAt = to, res, at
	}, primaryActor, ActionCallApprovalFinish, map[string]any{"status": string(to), "result": res.Status}, tell...)
}

// stepCall moves record id from state from by change in one transaction: it reads the record,
// refuses another state (ErrConflict), writes the change with a compare-and-set on from, then
// appends the audit entry and enqueues tell. It returns the record as stored.
func (p *Portable) stepCall(ctx context.Context, id int64, verb string, from CallApprovalStatus, at time.Time,
	change func(*CallApproval), actor, action string, detail map[string]any, tell ...NewContinuation,
) (CallApproval, error) {
	var out CallApproval
	err := p.update(ctx, func(tx Tx) error {
		prev, err := tx.CallApproval(ctx, id)
		if err != nil {
			return err
		}
		next := prev
		change(&next)
		ok := false
		if prev.Status == from {
			if ok, err = tx.UpdateCallApproval(ctx, from, next); err != nil {
				return err
			}
		}
		if !ok {
			cur, err := tx.CallApproval(ctx, id)
			if err != nil {
				return err
			}
			return fmt.Errorf("%w: cannot %s call approval %d: it is %s, not %s", ErrConflict, verb, id, cur.Status, from)
		}
		if err := callAudit(ctx, tx, at, actor, action, id, prev.CallID, detail); err != nil {
			return err
		}
		// A decision closes the call's card; its claim and result update it.
		change := ThreadUpdated
		if from == CallApprovalWaiting {
			change = ThreadClosed
		}
		tellThread(ctx, tx, ThreadCallApproval, id, change, at)
		if err := enqueueAll(ctx, tx, tell, at); err != nil {
			return err
		}
		out, err = tx.CallApproval(ctx, id)
		return err
	})
	return out, err
}

// callAudit appends a call approval's audit entry; detail gets the record's and call's ids.
func callAudit(ctx context.Context, tx Tx, at time.Time, actor, action string, id int64, callID string, detail map[string]any) error {
	d := map[string]any{"call_approval": id, "call_id": callID}
	for k, v := range detail {
		d[k] = v
	}
	return audit(ctx, tx, at, actor, action, CallApprovalSubject(id), d)
}
