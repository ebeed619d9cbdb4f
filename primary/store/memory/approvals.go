package memory

import (
	"context"
	"fmt"
	"slices"

	"github.com/turncli/turncli/primary/store"
)

// InsertApproval implements store.Tx: while an approval of a.Key is pending, whoever saved
// it, the insert finds that one instead.
func (t *tx) InsertApproval(_ context.Context, a store.Approval) (int64, bool, error) {
	if a.Status == store.ApprovalPending {
		if id, ok := t.s.pendingApprovals[a.Key]; ok {
			return id, false, nil
		}
	}
	a.ID, a.Comments = t.s.approvals.nextID(), nil
	a.CreatedAt, a.DecidedAt, a.SettledAt = stamp(a.CreatedAt), stamp(a.DecidedAt), stamp(a.SettledAt)
	t.s.approvals.insert(t, a)
	t.indexApproval(store.Approval{}, a)
	return a.ID, true, nil
}

// indexApproval keeps the indexes of approvals when one changes from prev (zero: a new one)
// to next.
func (t *tx) indexApproval(prev, next store.Approval) {
	if prev.JobID != next.JobID {
		if prev.JobID != 0 {
			remove(t, t.s.approvalJobs, prev.JobID)
		}
		if next.JobID != 0 {
			put(t, t.s.approvalJobs, next.JobID, next.ID)
		}
	}
	if prev.Status == store.ApprovalPending && next.Status != store.ApprovalPending {
		remove(t, t.s.pendingApprovals, prev.Key)
	}
	if next.Status == store.ApprovalPending && prev.Status != store.ApprovalPending {
		put(t, t.s.pendingApprovals, next.Key, next.ID)
	}
}

// UpdateApproval implements store.Tx: the approval's job is part of the prior state.
func (t *tx) UpdateApproval(_ context.Context, prev, next store.Approval) (bool, error) {
	stored, ok := t.s.approvals.get(next.ID)
	if !ok || stored.Status != prev.Status || stored.JobID != prev.JobID {
		return false, nil
	}
	if next.JobID != 0 && next.JobID != stored.JobID {
		// The schema's foreign key and unique job id.
		if _, ok := t.s.jobs.get(next.JobID); !ok {
			return false, fmt.Errorf("store: update approval: no job %d", next.JobID)
		}
		if other, taken := t.s.approvalJobs[next.JobID]; taken {
			return false, fmt.Errorf("store: update approval: job %d belongs to approval %d", next.JobID, other)
		}
	}
	updated := stored
	updated.Status, updated.DecidedBy, updated.DecidedAt = next.Status, next.DecidedBy, stamp(next.DecidedAt)
	updated.JobID, updated.Note, updated.SettledAt = next.JobID, next.Note, stamp(next.SettledAt)
	t.s.approvals.set(t, next.ID, updated)
	t.indexApproval(stored, updated)
	return true, nil
}

// QueueApprovalChange implements store.Tx: the store is in this process, so the change is
// made at once, as UpdateApproval makes it from the approval as stored.
func (t *tx) QueueApprovalChange(ctx context.Context, id int64, from store.ApprovalStatus, withJob bool, c store.ApprovalChange) func() (store.Approval, error) {
	stored, ok := t.s.approvals.get(id)
	if !ok || stored.Status != from || (withJob && stored.JobID == 0) {
		err := t.unmatch(fmt.Sprintf("approval %d", id))
		return func() (store.Approval, error) { return store.Approval{}, err }
	}
	next := stored
	next.Status = c.Status
	if !c.DecidedAt.IsZero() {
		next.DecidedBy, next.DecidedAt = c.DecidedBy, c.DecidedAt
	}
	if !c.SettledAt.IsZero() {
		next.Note, next.SettledAt = c.Note, c.SettledAt
	}
	var ap store.Approval
	_, err := t.UpdateApproval(ctx, stored, next)
	if err == nil {
		ap, err = t.Approval(ctx, id)
	}
	return func() (store.Approval, error) { return ap, err }
}

// InsertApprovalComment implements store.Tx.
func (t *tx) InsertApprovalComment(_ context.Context, id int64, from store.ApprovalStatus, c store.ApprovalComment) (bool, error) {
	stored, ok := t.s.approvals.get(id)
	if !ok || stored.Status != from {
		return false, nil
	}
	c.At = stamp(c.At)
	// Clipped, the append copies: the undo log keeps the comments as they were.
	stored.Comments = append(slices.Clip(stored.Comments), c)
	t.s.approvals.set(t, id, stored)
	return true, nil
}

// approvalOut is a stored approval as a reader gets it, with its own comments.
func approvalOut(a *store.Approval) store.Approval {
	out := *a
	out.Comments = slices.Clone(a.Comments)
	return out
}

// Approval implements store.Reader.
func (v view) Approval(_ context.Context, id int64) (store.Approval, error) {
	defer v.read()()
	return v.s.approvals.read(id, "approval", approvalOut)
}

// ListApprovals implements store.Reader.
func (v view) ListApprovals(_ context.Context, f store.ApprovalFilter) ([]store.Approval, error) {
	defer v.read()()
	return newestFirst(&v.s.approvals, f.BeforeID, f.Limit, func(a *store.Approval) bool {
		return equalOrAny(a.Status, f.Status) && inConversation(a.Channel, a.Thread, f.Channel, f.Thread)
	}, approvalOut), nil
}
