package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/turncli/turncli/primary/store"
)

// InsertCallApproval implements store.Tx. A refused row must leave the transaction usable,
// and an error would abort it: the conflict is read from the missing id instead.
func (t *Tx) InsertCallApproval(ctx context.Context, c store.CallApproval) (int64, error) {
	var id int64
	err := t.queryRow(ctx, `INSERT INTO call_approvals (call_id, toolkit, function, arguments, bash_call_id,
		response_id, agent, requester, channel, thread, worker_key, checkpoint, status, created_at, decided_by, decided_at,
		note, claimed_at, result_status, outcome, settled_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING RETURNING id`,
		c.CallID, c.Toolkit, c.Function, c.Arguments, c.BashCallID, c.ResponseID, c.Agent, c.Requester, c.Channel,
		c.Thread, c.WorkerKey, nonNilBytes(c.Checkpoint), string(c.Status), nanos(c.CreatedAt), c.DecidedBy,
		nullNanos(c.DecidedAt), c.Note, nullNanos(c.ClaimedAt), c.Result.Status, c.Result.Outcome, nullNanos(c.SettledAt)).Scan(&id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, fmt.Errorf("store: response %s, call %s: %w", c.ResponseID, c.CallID, store.ErrExists)
	case err != nil:
		return 0, fmt.Errorf("store: save call approval: %w", err)
	}
	return id, nil
}

// UpdateCallApproval implements store.Tx.
func (t *Tx) UpdateCallApproval(ctx context.Context, from store.CallApprovalStatus, c store.CallApproval) (bool, error) {
	n, err := t.exec(ctx, "update call approval", `UPDATE call_approvals SET status = ?, decided_by = ?, decided_at = ?,
		note = ?, claimed_at = ?, result_status = ?, outcome = ?, settled_at = ? WHERE id = ? AND status = ?`,
		string(c.Status), c.DecidedBy, nullNanos(c.DecidedAt), c.Note, nullNanos(c.ClaimedAt), c.Result.Status,
		c.Result.Outcome, nullNanos(c.SettledAt), c.ID, string(from))
	return n == 1, err
}

// CallApproval implements store.Reader.
func (r Reader) CallApproval(ctx context.Context, id int64) (store.CallApproval, error) {
	var c conditions
	c.Add("id = ?", id)
	found, err := r.queryCallApprovals(ctx, c, 1)
	return only(found, err, "call approval", id)
}

// ListCallApprovals implements store.Reader.
func (r Reader) ListCallApprovals(ctx context.Context, f store.CallApprovalFilter) ([]store.CallApproval, error) {
	var c conditions
	c.Equal("status", string(f.Status))
	c.Conversation(f.Channel, f.Thread)
	c.Equal("response_id", f.ResponseID)
	c.BeforeID(f.BeforeID)
	return r.queryCallApprovals(ctx, c, f.Limit)
}

// queryCallApprovals returns up to limit records matching c, newest first.
func (r Reader) queryCallApprovals(ctx context.Context, c conditions, limit int) ([]store.CallApproval, error) {
	rows, err := r.query(ctx, `SELECT id, call_id, toolkit, function, arguments, bash_call_id, response_id, agent,
		requester, channel, thread, worker_key, checkpoint, status, created_at, decided_by, decided_at, note, claimed_at,
		result_status, outcome, settled_at FROM call_approvals WHERE `+c.SQL()+` ORDER BY id DESC LIMIT ?`,
		append(c.Args, r.limit(limit))...)
	if err != nil {
		return nil, fmt.Errorf("store: call approvals: %w", err)
	}
	out, err := collect(rows, func(row Row) (store.CallApproval, error) {
		var c store.CallApproval
		var status string
		var created int64
		var decided, claimed, settled *int64
		if err := row.Scan(&c.ID, &c.CallID, &c.Toolkit, &c.Function, &c.Arguments, &c.BashCallID, &c.ResponseID,
			&c.Agent, &c.Requester, &c.Channel, &c.Thread, &c.WorkerKey, &c.Checkpoint, &status, &created, &c.DecidedBy,
			&decided, &c.Note, &claimed, &c.Result.Status, &c.Result.Outcome, &settled); err != nil {
			return c, err
		}
		c.Status = store.CallApprovalStatus(status)
		c.CreatedAt = fromNanos(created)
		c.DecidedAt, c.ClaimedAt, c.SettledAt = fromNullNanos(decided), fromNullNanos(claimed), fromNullNanos(settled)
		if len(c.Checkpoint) == 0 {
			c.Checkpoint = nil
		}
		return c, nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: call approvals: %w", err)
	}
	return out, nil
}

func nonNilBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
