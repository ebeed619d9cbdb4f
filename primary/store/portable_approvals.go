package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// SaveApproval implements Approvals. The driver keeps one pending approval per key, whoever
// saved it, so an identical request returns the pending one.
func (p *Portable) SaveApproval(ctx context.Context, a NewApproval) (ap Approval, created bool, err error) {
	switch {
	case a.Kind != "command":
		return Approval{}, false, invalid("approval kind must be command, not %q", a.Kind)
	case a.Channel == "":
		return Approval{}, false, invalid("an approval needs a channel")
	case a.Command == "":
		return Approval{}, false, invalid("an approval needs a command")
	case a.Workdir == "":
		return Approval{}, false, invalid("an approval needs a workdir")
	case a.Ceiling < 0:
		return Approval{}, false, invalid("an approval's ceiling cannot be negative")
	}
	rec := Approval{NewApproval: a, Key: a.Key(), Status: ApprovalPending, CreatedAt: p.clock()}
	err = p.update(ctx, func(tx Tx) error {
		id, made, err := tx.InsertApproval(ctx, rec)
		if err != nil {
			return err
		}
		created = made
		if made {
			tellThread(ctx, tx, ThreadApproval, id, ThreadOpened, rec.CreatedAt)
		}
		ap, err = tx.Approval(ctx, id)
		return err
	})
	if err != nil {
		return Approval{}, false, err
	}
	return ap, created, nil
}

// Approval implements Approvals.
func (p *Portable) Approval(ctx context.Context, id int64) (Approval, error) {
	return p.d.Approval(ctx, id)
}

// ListApprovals implements Approvals.
func (p *Portable) ListApprovals(ctx context.Context, f ApprovalFilter) ([]Approval, error) {
	var err error
	if f.Limit, err = listLimit(f.Limit); err != nil {
		return nil, err
	}
	if f.Status != "" && !f.Status.valid() {
		return nil, invalid("approval status %q is unknown", f.Status)
	}
	if err := checkBeforeID(f.BeforeID); err != nil {
		return nil, err
	}
	return p.d.ListApprovals(ctx, f)
}

func (st ApprovalStatus) valid() bool {
	switch st {
	case ApprovalPending, ApprovalExecuting, ApprovalConsumed, ApprovalFailed, ApprovalDenied:
		return true
	}
	return false
}

// approvalStep is one transition of an approval: the state it leaves, what it writes, and
// the audit entry that goes with it.
type approvalStep struct {
	verb string
	from ApprovalStatus
	// needsJob: the approval must have a recorded job (consumed).
	needsJob bool
	change   ApprovalChange
	actor    string
	action   string
	// detail is the audit entry's detail; detailOf, when set, makes it from the approval as
	// changed instead, for a detail that names what the record holds.
	detail   map[string]any
	detailOf func(Approval) map[string]any
}

// stepApproval queues st on approval id inside tx: its change, a compare-and-set on the state
// st leaves, the audit entry that goes with it, and tell. A change that finds another state, or
// no approval, fails the transaction with ErrUnmatched (lostApproval says why). The function
// returned gives the approval as stored. Unless the entry's detail needs the approval as
// changed, nothing is read before the commit, so a driver may send it all with the commit.
func stepApproval(ctx context.Context, tx Tx, id int64, at time.Time, st approvalStep, tell ...NewContinuation) (func() (Approval, error), error) {
	changed := tx.QueueApprovalChange(ctx, id, st.from, st.needsJob, st.change)
	detail := st.detail
	if st.detailOf != nil {
		next, err := changed()
		if err != nil {
			return nil, err
		}
		detail = st.detailOf(next)
	}
	detail["approval"] = id
	if err := audit(ctx, tx, at, st.actor, st.action, ApprovalSubject(id), detail); err != nil {
		return nil, err
	}
	// A decision closes the approval's card; what follows (its job's outcome) updates it.
	change := ThreadUpdated
	if st.from == ApprovalPending {
		change = ThreadClosed
	}
	tellThread(ctx, tx, ThreadApproval, id, change, at)
	if err := enqueueAll(ctx, tx, tell, at); err != nil {
		return nil, err
	}
	return changed, nil
}

// lostApproval is the error of a change that found approval id in another state, or missing,
// read from r: the transaction, or the store once the transaction failed.
func lostApproval(ctx context.Context, r Reader, id int64, verb string) error {
	cur, err := r.Approval(ctx, id)
	if err != nil {
		return err
	}
	return conflict(id, cur, verb)
}

func conflict(id int64, ap Approval, verb string) error {
	state := string(ap.Status)
	switch {
	case ap.Status == ApprovalExecuting && ap.JobID != 0:
		state += " with a job"
	case ap.Status == ApprovalExecuting:
		state += " without a job"
	}
	return fmt.Errorf("%w: cannot %s approval %d: it is %s", ErrConflict, verb, id, state)
}

// BeginApproval implements Approvals.
func (p *Portable) BeginApproval(ctx context.Context, id int64, actor string) (Approval, error) {
	if actor == "" {
		return Approval{}, invalid("an approval needs an actor")
	}
	at := p.clock()
	return p.stepApproval(ctx, id, at, approvalStep{
		verb: "approve", from: ApprovalPending,
		change: ApprovalChange{Status: ApprovalExecuting, DecidedBy: actor, DecidedAt: at},
		actor:  actor, action: ActionApprovalApprove, detail: map[string]any{},
	})
}

// DenyApproval implements Approvals.
func (p *Portable) DenyApproval(ctx context.Context, id int64, actor, reason string, tell ...NewContinuation) (Approval, error) {
	if actor == "" {
		return Approval{}, invalid("a denial needs an actor")
	}
	if err := checkBytes("a deny reason", reason, 0); err != nil {
		return Approval{}, err
	}
	at := p.clock()
	return p.stepApproval(ctx, id, at, approvalStep{
		verb: "deny", from: ApprovalPending,
		change: ApprovalChange{Status: ApprovalDenied, DecidedBy: actor, DecidedAt: at, Note: reason, SettledAt: at},
		actor:  actor, action: ActionApprovalDeny, detail: map[string]any{"reason": reason},
	}, tell...)
}

// stepApproval runs st in its own transaction.
func (p *Portable) stepApproval(ctx context.Context, id int64, at time.Time, st approvalStep, tell ...NewContinuation) (Approval, error) {
	var changed func() (Approval, error)
	err := p.update(ctx, func(tx Tx) (err error) {
		changed, err = stepApproval(ctx, tx, id, at, st, tell...)
		return err
	})
	switch {
	case errors.Is(err, ErrUnmatched):
		return Approval{}, lostApproval(ctx, p.d, id, st.verb)
	case err != nil:
		return Approval{}, err
	}
	return changed()
}

// CommentApproval implements Approvals.
func (p *Portable) CommentApproval(ctx context.Context, id int64, actor, text string, tell ...NewContinuation) (Approval, error) {
	if actor == "" {
		return Approval{}, invalid("a comment needs an actor")
	}
	if err := checkBytes("a comment", text, 1); err != nil {
		return Approval{}, err
	}
	at := p.clock()
	var out Approval
	err := p.update(ctx, func(tx Tx) error {
		ok, err := tx.InsertApprovalComment(ctx, id, ApprovalPending, ApprovalComment{Actor: actor, Text: text, At: at})
		if err != nil {
			return err
		}
		if !ok {
			return lostApproval(ctx, tx, id, "comment on")
		}
		if err := audit(ctx, tx, at, actor, ActionApprovalComment, ApprovalSubject(id),
			map[string]any{"approval": id, "comment": text}); err != nil {
			return err
		}
		tellThread(ctx, tx, ThreadApproval, id, ThreadUpdated, at)
		if err := enqueueAll(ctx, tx, tell, at); err != nil {
			return err
		}
		out, err = tx.Approval(ctx, id)
		return err
	})
	return out, err
}

// settleStep moves an executing approval to consumed (only with a job) or failed.
func settleStep(to ApprovalStatus, note string, at time.Time) approvalStep {
	st := approvalStep{
		verb: "settle", from: ApprovalExecuting, needsJob: to == ApprovalConsumed,
		change: ApprovalChange{Status: to, Note: note, SettledAt: at},
		actor:  primaryActor, action: ActionApprovalFail, detail: map[string]any{"note": note},
	}
	if to == ApprovalConsumed {
		st.action = ActionApprovalConsume
		st.detailOf = func(ap Approval) map[string]any { return map[string]any{"job": ap.JobID} }
	}
	return st
}

// SettleApproval implements Approvals.
func (p *Portable) SettleApproval(ctx context.Context, id int64, to ApprovalStatus, note string, tell ...NewContinuation) (Approval, error) {
	if to != ApprovalConsumed && to != ApprovalFailed {
		return Approval{}, invalid("an approval settles as consumed or failed, not %q", to)
	}
	if err := checkBytes("a note", note, 0); err != nil {
		return Approval{}, err
	}
	at := p.clock()
	return p.stepApproval(ctx, id, at, settleStep(to, note, at), tell...)
}

// RecoverApprovals implements Approvals: nothing is re-run, every executing approval is
// settled by whether its job was recorded.
func (p *Portable) RecoverApprovals(ctx context.Context) ([]Approval, error) {
	at := p.clock()
	var settled []func() (Approval, error)
	err := p.update(ctx, func(tx Tx) error {
		settled = nil
		executing, err := tx.ListApprovals(ctx, ApprovalFilter{Status: ApprovalExecuting})
		if err != nil {
			return err
		}
		slices.Reverse(executing) // oldest first
		for _, ap := range executing {
			to, note := ApprovalConsumed, ""
			if ap.JobID == 0 {
				to, note = ApprovalFailed, ApprovalRestartNote
			}
			changed, err := stepApproval(ctx, tx, ap.ID, at, settleStep(to, note, at))
			if err != nil {
				return err
			}
			settled = append(settled, changed)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]Approval, len(settled))
	for i, changed := range settled {
		if out[i], err = changed(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// CreateApprovedJob implements Approvals: the job goes through createJob, the same cap check
// and insert as CreateJob, and is linked to the approval in the same transaction.
func (p *Portable) CreateApprovedJob(ctx context.Context, approvalID int64, j NewJob, caps JobCaps) (Job, error) {
	if err := checkJob(j); err != nil {
		return Job{}, err
	}
	at := p.clock()
	var out Job
	err := p.update(ctx, func(tx Tx) error {
		ap, err := tx.Approval(ctx, approvalID)
		if err != nil {
			return err
		}
		if ap.Status != ApprovalExecuting || ap.JobID != 0 {
			return conflict(approvalID, ap, "start a job for")
		}
		if j.Kind != ap.Kind || j.Channel != ap.Channel || j.Thread != ap.Thread || j.Author != ap.Author ||
			j.Command != ap.Command || j.Ceiling != ap.Ceiling {
			return invalid("the job differs from what approval %d approved", approvalID)
		}
		if out, err = createJob(ctx, tx, j, caps, at); err != nil {
			return err
		}
		linked := ap
		linked.JobID = out.ID
		if ok, err := tx.UpdateApproval(ctx, ap, linked); err != nil {
			return err
		} else if !ok {
			return lostApproval(ctx, tx, approvalID, "start a job for")
		}
		return nil
	})
	if err != nil {
		return Job{}, err
	}
	return out, nil
}
