package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/turncli/turncli/primary/store"
)

// InsertPrompt implements store.Tx.
func (t *Tx) InsertPrompt(ctx context.Context, p store.Prompt) (int64, error) {
	var id int64
	if err := t.queryRow(ctx, `INSERT INTO prompts (kind, channel, thread, requester, agent, response_id, call_id,
		title, details, approve_label, deny_label, tool_name, tool_use_id, masked_input, status, created_at, deadline,
		decided_by, decided_at, decision, feedback, parked_job)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		string(p.Kind), p.Channel, p.Thread, p.Requester, p.Agent, p.ResponseID, p.CallID,
		p.Title, p.Details, p.ApproveLabel, p.DenyLabel, p.ToolName, p.ToolUseID, nullJSON(p.MaskedInput), string(p.Status),
		nanos(p.CreatedAt), nanos(p.Deadline), p.DecidedBy, nullNanos(p.DecidedAt), p.Decision, p.Feedback,
		nullID(p.ParkedJob)).Scan(&id); err != nil {
		return 0, fmt.Errorf("store: create prompt: %w", err)
	}
	return id, nil
}

// UpdatePrompt implements store.Tx.
func (t *Tx) UpdatePrompt(ctx context.Context, from store.PromptStatus, p store.Prompt) (bool, error) {
	n, err := t.exec(ctx, "update prompt", `UPDATE prompts SET status = ?, decided_by = ?, decided_at = ?, decision = ?,
		feedback = ?, parked_job = ? WHERE id = ? AND status = ?`,
		string(p.Status), p.DecidedBy, nullNanos(p.DecidedAt), p.Decision, p.Feedback, nullID(p.ParkedJob), p.ID, string(from))
	return n == 1, err
}

// nullJSON is a JSON text column's value: NULL for none.
func nullJSON(raw json.RawMessage) *string {
	if raw == nil {
		return nil
	}
	s := string(raw)
	return &s
}

// Prompt implements store.Reader.
func (r Reader) Prompt(ctx context.Context, id int64) (store.Prompt, error) {
	var c conditions
	c.Add("id = ?", id)
	found, err := r.queryPrompts(ctx, c, 1)
	return only(found, err, "prompt", id)
}

// ListPrompts implements store.Reader.
func (r Reader) ListPrompts(ctx context.Context, f store.PromptFilter) ([]store.Prompt, error) {
	var c conditions
	c.Equal("status", string(f.Status))
	c.Equal("kind", string(f.Kind))
	c.Conversation(f.Channel, f.Thread)
	c.BeforeID(f.BeforeID)
	return r.queryPrompts(ctx, c, f.Limit)
}

const promptColumns = `id, kind, channel, thread, requester, agent, response_id, call_id, title, details, approve_label,
	deny_label, tool_name, tool_use_id, masked_input, status, created_at, deadline, decided_by, decided_at, decision, feedback,
	parked_job`

// queryPrompts returns up to limit prompts matching c, newest first.
func (r Reader) queryPrompts(ctx context.Context, c conditions, limit int) ([]store.Prompt, error) {
	rows, err := r.query(ctx, `SELECT `+promptColumns+` FROM prompts WHERE `+c.SQL()+` ORDER BY id DESC LIMIT ?`,
		append(c.Args, r.limit(limit))...)
	if err != nil {
		return nil, fmt.Errorf("store: prompts: %w", err)
	}
	out, err := collect(rows, func(row Row) (store.Prompt, error) {
		var p store.Prompt
		var kind, status string
		var masked *string
		var created, deadline int64
		var decided, parked *int64
		if err := row.Scan(&p.ID, &kind, &p.Channel, &p.Thread, &p.Requester, &p.Agent, &p.ResponseID, &p.CallID,
			&p.Title, &p.Details, &p.ApproveLabel, &p.DenyLabel, &p.ToolName, &p.ToolUseID, &masked, &status,
			&created, &deadline, &p.DecidedBy, &decided, &p.Decision, &p.Feedback, &parked); err != nil {
			return p, err
		}
		if parked != nil {
			p.ParkedJob = *parked
		}
		p.Kind, p.Status = store.PromptKind(kind), store.PromptStatus(status)
		if masked != nil {
			p.MaskedInput = json.RawMessage(*masked)
		}
		p.CreatedAt, p.Deadline, p.DecidedAt = fromNanos(created), fromNanos(deadline), fromNullNanos(decided)
		return p, nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: prompts: %w", err)
	}
	return out, nil
}

// PutPermissionAllowance implements store.Tx.
func (t *Tx) PutPermissionAllowance(ctx context.Context, a store.PermissionAllowance) error {
	_, err := t.exec(ctx, "allow "+a.ToolName, `INSERT INTO permission_allowances
		(channel, thread, tool_name, scope, granted_by, granted_at, prompt_id) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (channel, thread, tool_name, scope) DO UPDATE
		SET granted_by = excluded.granted_by, granted_at = excluded.granted_at, prompt_id = excluded.prompt_id`,
		a.Channel, a.Thread, a.ToolName, a.Scope, a.GrantedBy, nanos(a.GrantedAt), a.PromptID)
	return err
}

const allowanceColumns = `channel, thread, tool_name, scope, granted_by, granted_at, prompt_id`

func scanAllowance(row Row) (store.PermissionAllowance, error) {
	var a store.PermissionAllowance
	var granted int64
	err := row.Scan(&a.Channel, &a.Thread, &a.ToolName, &a.Scope, &a.GrantedBy, &granted, &a.PromptID)
	a.GrantedAt = fromNanos(granted)
	return a, err
}

// DeletePermissionAllowance implements store.Tx.
func (t *Tx) DeletePermissionAllowance(ctx context.Context, a store.PermissionAllowance) (store.PermissionAllowance, error) {
	gone, err := scanAllowance(t.queryRow(ctx, `DELETE FROM permission_allowances
		WHERE channel = ? AND thread = ? AND tool_name = ? AND scope = ? RETURNING `+allowanceColumns,
		a.Channel, a.Thread, a.ToolName, a.Scope))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.PermissionAllowance{}, fmt.Errorf("%w: allowance", store.ErrNotFound)
	case err != nil:
		return store.PermissionAllowance{}, fmt.Errorf("store: revoke allowance: %w", err)
	}
	return gone, nil
}

// DeletePermissionAllowances implements store.Tx.
func (t *Tx) DeletePermissionAllowances(ctx context.Context, scope string) error {
	_, err := t.exec(ctx, "drop allowances", `DELETE FROM permission_allowances WHERE scope = ?`, scope)
	return err
}

// PermissionAllowances implements store.Reader.
func (r Reader) PermissionAllowances(ctx context.Context, f store.AllowanceFilter) ([]store.PermissionAllowance, error) {
	var c conditions
	c.Conversation(f.Channel, f.Thread)
	c.Equal("tool_name", f.ToolName)
	a := f.After
	c.AfterTime("granted_at", a.GrantedAt, []string{"channel", "thread", "tool_name", "scope"},
		[]any{a.Channel, a.Thread, a.ToolName, a.Scope})
	rows, err := r.query(ctx, `SELECT `+allowanceColumns+` FROM permission_allowances WHERE `+c.SQL()+`
		ORDER BY granted_at DESC, channel, thread, tool_name, scope LIMIT ?`, append(c.Args, r.limit(f.Limit))...)
	if err != nil {
		return nil, fmt.Errorf("store: permission allowances: %w", err)
	}
	out, err := collect(rows, scanAllowance)
	if err != nil {
		return nil, fmt.Errorf("store: permission allowances: %w", err)
	}
	return out, nil
}
