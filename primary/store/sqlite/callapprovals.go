package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/turncli/turncli/primary/store"
)

// InsertCallApproval implements store.Tx.
func (t *tx) InsertCallApproval(ctx context.Context, c store.CallApproval) (int64, error) {
	var id int64
	err := t.tx.QueryRowContext(ctx, `INSERT INTO call_approvals (call_id, toolkit, function, arguments, bash_call_id,
		response_id, agent, requester, channel, thread, worker_key, checkpoint, status, created_at, decided_by, decided_at,
		note, claimed_at, result_status, outcome, settled_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		c.CallID, c.Toolkit, c.Function, c.Arguments, c.BashCallID, c.ResponseID, c.Agent, c.Requester, c.Channel,
		c.Thread, c.WorkerKey, nonNilBytes(c.Checkpoint), string(c.Status), nanos(c.CreatedAt), c.DecidedBy,
		nullNanos(c.DecidedAt), c.Note, nullNanos(c.ClaimedAt), c.Result.Status, c.Result.Outcome, nullNanos(c.SettledAt)).Scan(&id)
	switch {
	case isUniqueViolation(err):
		return 0, fmt.Errorf("store: response %s, call %s: %w", c.ResponseID, c.CallID, store.ErrExists)
	case err != nil:
		return 0, fmt.Errorf("store: save call approval: %w", err)
	}
	return id, nil
}

// UpdateCallApproval implements store.Tx.
func (t *tx) UpdateCallApproval(ctx context.Context, from store.CallApprovalStatus, c store.CallApproval) (bool, error) {
	n, err := t.exec(ctx, "update call approval", `UPDATE call_approvals SET status = ?, decided_by = ?, decided_at = ?,
		note = ?, claimed_at = ?, result_status = ?, outcome = ?, settled_at = ? WHERE id = ? AND status = ?`,
		string(c.Status), c.DecidedBy, nullNanos(c.DecidedAt), c.Note, nullNanos(c.ClaimedAt), c.Result.Status,
		c.Result.Outcome, nullNanos(c.SettledAt), c.ID, string(from))
	return n == 1, err
}

// CallApproval implements store.Reader.
func (r reader) CallApproval(ctx context.Context, id int64) (store.CallApproval, error) {
	list, err := r.queryCallApprovals(ctx, "id = ?", []any{id}, 1)
	if err != nil {
		return store.CallApproval{}, err
	}
	if len(list) == 0 {
		return store.CallApproval{}, fmt.Errorf("%w: call approval %d", store.ErrNotFound, id)
	}
	return list[0], nil
}

// ListCallApprovals implements store.Reader.
func (r reader) ListCallApprovals(ctx context.Context, f store.CallApprovalFilter) ([]store.CallApproval, error) {
	var c conditions
	c.Equal("status", string(f.Status))
	c.Conversation(f.Channel, f.Thread)
	c.Equal("response_id", f.ResponseID)
	c.BeforeID(f.BeforeID)
	return r.queryCallApprovals(ctx, c.SQL(), c.Args, sqlLimit(f.Limit))
}

// queryCallApprovals returns up to limit records matching where, newest first.
func (r reader) queryCallApprovals(ctx context.Context, where string, args []any, limit int) ([]store.CallApproval, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT id, call_id, toolkit, function, arguments, bash_call_id, response_id, agent,
		requester, channel, thread, worker_key, checkpoint, status, created_at, decided_by, decided_at, note, claimed_at,
		result_status, outcome, settled_at FROM call_approvals WHERE `+where+` ORDER BY id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("store: call approvals: %w", err)
	}
	defer rows.Close()
	var out []store.CallApproval
	for rows.Next() {
		var c store.CallApproval
		var status string
		var created int64
		var decided, claimed, settled sql.NullInt64
		if err := rows.Scan(&c.ID, &c.CallID, &c.Toolkit, &c.Function, &c.Arguments, &c.BashCallID, &c.ResponseID,
			&c.Agent, &c.Requester, &c.Channel, &c.Thread, &c.WorkerKey, &c.Checkpoint, &status, &created, &c.DecidedBy,
			&decided, &c.Note, &claimed, &c.Result.Status, &c.Result.Outcome, &settled); err != nil {
			return nil, fmt.Errorf("store: call approvals: %w", err)
		}
		c.Status = store.CallApprovalStatus(status)
		c.CreatedAt = fromNanos(created)
		c.DecidedAt, c.ClaimedAt, c.SettledAt = fromNullNanos(decided), fromNullNanos(claimed), fromNullNanos(settled)
		if len(c.Checkpoint) == 0 {
			c.Checkpoint = nil
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
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
