package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/turncli/turncli/primary/store"
)

// SaveCallApproval implements store.CallApprovals.
func (s *Store) SaveCallApproval(ctx context.Context, c store.NewCallApproval) (store.CallApproval, error) {
	if err := validNewCallApproval(c); err != nil {
		return store.CallApproval{}, err
	}
	var out store.CallApproval
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		now := s.now()
		var id int64
		err := tx.QueryRowContext(ctx, `INSERT INTO call_approvals (call_id, toolkit, function, arguments, bash_call_id,
			response_id, agent, requester, channel, thread, worker_key, checkpoint, status, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'waiting', ?)
			ON CONFLICT (response_id, call_id) DO NOTHING RETURNING id`,
			c.CallID, c.Toolkit, c.Function, c.Arguments, c.BashCallID, c.ResponseID, c.Agent, c.Requester, c.Channel,
			c.Thread, c.WorkerKey, nonNilBytes(c.Checkpoint), nanos(now)).Scan(&id)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("%w: response %s already saved call %s", store.ErrConflict, c.ResponseID, c.CallID)
		case err != nil:
			return fmt.Errorf("store: save call approval: %w", err)
		}
		e, err := callAuditEntry(primaryActor, store.ActionCallApprovalRequest, id, c.CallID, map[string]any{
			"toolkit": c.Toolkit, "function": c.Function, "response_id": c.ResponseID,
		})
		if err != nil {
			return err
		}
		if _, err := insertAudit(ctx, tx, e, now); err != nil {
			return err
		}
		out, err = callApprovalIn(ctx, tx, id)
		return err
	})
	return out, err
}

func validNewCallApproval(c store.NewCallApproval) error {
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
		if !utf8.ValidString(f) || len(f) > 1024 {
			return invalid("a call approval's names must be UTF-8 of at most 1024 bytes")
		}
	}
	switch {
	case len(c.Arguments) > store.MaxCallArguments:
		return invalid("a call approval's arguments exceed %d bytes", store.MaxCallArguments)
	case !json.Valid([]byte(c.Arguments)) || !strings.HasPrefix(c.Arguments, "{"):
		return invalid("a call approval's arguments must be a JSON object")
	case len(c.Checkpoint) > store.MaxCheckpoint:
		return invalid("a checkpoint exceeds %d bytes", store.MaxCheckpoint)
	}
	return nil
}

// CallApproval implements store.CallApprovals.
func (s *Store) CallApproval(ctx context.Context, id int64) (store.CallApproval, error) {
	return callApprovalIn(ctx, s.read, id)
}

// ListCallApprovals implements store.CallApprovals.
func (s *Store) ListCallApprovals(ctx context.Context, f store.CallApprovalFilter) ([]store.CallApproval, error) {
	limit, err := listLimit(f.Limit)
	if err != nil {
		return nil, err
	}
	if f.Status != "" && !f.Status.Valid() {
		return nil, invalid("call approval status %q is unknown", f.Status)
	}
	var c conditions
	c.equal("status", string(f.Status))
	c.conversation(f.Channel, f.Thread)
	c.equal("response_id", f.ResponseID)
	return queryCallApprovals(ctx, s.read, c.sql(), c.args, limit)
}

// callApprovalIn returns record id read through q; ErrNotFound when it does not exist.
func callApprovalIn(ctx context.Context, q querier, id int64) (store.CallApproval, error) {
	list, err := queryCallApprovals(ctx, q, "id = ?", []any{id}, 1)
	if err != nil {
		return store.CallApproval{}, err
	}
	if len(list) == 0 {
		return store.CallApproval{}, fmt.Errorf("%w: call approval %d", store.ErrNotFound, id)
	}
	return list[0], nil
}

// queryCallApprovals returns up to limit records matching where, newest first.
func queryCallApprovals(ctx context.Context, q querier, where string, args []any, limit int) ([]store.CallApproval, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, call_id, toolkit, function, arguments, bash_call_id, response_id, agent,
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
		if decided.Valid {
			c.DecidedAt = fromNanos(decided.Int64)
		}
		if claimed.Valid {
			c.ClaimedAt = fromNanos(claimed.Int64)
		}
		if settled.Valid {
			c.SettledAt = fromNanos(settled.Int64)
		}
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
