package memory

import (
	"context"
	"fmt"

	"github.com/turncli/turncli/primary/store"
)

// InsertCallApproval implements store.Tx: a response saves each call id once.
func (t *tx) InsertCallApproval(_ context.Context, c store.CallApproval) (int64, error) {
	key := responseCall{c.ResponseID, c.CallID}
	if _, taken := t.s.calls[key]; taken {
		return 0, fmt.Errorf("store: response %s, call %s: %w", c.ResponseID, c.CallID, store.ErrExists)
	}
	c.ID, c.Checkpoint = t.s.callApprovals.nextID(), blob(c.Checkpoint)
	c.CreatedAt, c.DecidedAt, c.ClaimedAt, c.SettledAt = stamp(c.CreatedAt), stamp(c.DecidedAt), stamp(c.ClaimedAt), stamp(c.SettledAt)
	t.s.callApprovals.insert(t, c)
	put(t, t.s.calls, key, c.ID)
	return c.ID, nil
}

// UpdateCallApproval implements store.Tx.
func (t *tx) UpdateCallApproval(_ context.Context, from store.CallApprovalStatus, c store.CallApproval) (bool, error) {
	stored, ok := t.s.callApprovals.get(c.ID)
	if !ok || stored.Status != from {
		return false, nil
	}
	stored.Status, stored.DecidedBy, stored.DecidedAt, stored.Note = c.Status, c.DecidedBy, stamp(c.DecidedAt), c.Note
	stored.ClaimedAt, stored.Result, stored.SettledAt = stamp(c.ClaimedAt), c.Result, stamp(c.SettledAt)
	t.s.callApprovals.set(t, c.ID, stored)
	return true, nil
}

// callApprovalOut is a stored call approval as a reader gets it, with its own checkpoint.
func callApprovalOut(c *store.CallApproval) store.CallApproval {
	out := *c
	out.Checkpoint = blob(c.Checkpoint)
	return out
}

// CallApproval implements store.Reader.
func (v view) CallApproval(_ context.Context, id int64) (store.CallApproval, error) {
	defer v.read()()
	return v.s.callApprovals.read(id, "call approval", callApprovalOut)
}

// ListCallApprovals implements store.Reader.
func (v view) ListCallApprovals(_ context.Context, f store.CallApprovalFilter) ([]store.CallApproval, error) {
	defer v.read()()
	return newestFirst(&v.s.callApprovals, f.BeforeID, f.Limit, func(c *store.CallApproval) bool {
		return equalOrAny(c.Status, f.Status) && inConversation(c.Channel, c.Thread, f.Channel, f.Thread) &&
			equalOrAny(c.ResponseID, f.ResponseID)
	}, callApprovalOut), nil
}
