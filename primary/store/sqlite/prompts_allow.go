package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/turncli/turncli/primary/store"
)

// UsePermissionAllowance implements store.Prompts. The look-up and the audit entry of a use
// share one transaction, so every request an allowance answered is in the log.
func (s *Store) UsePermissionAllowance(ctx context.Context, u store.PermissionUse) (a store.PermissionAllowance, allowed bool, err error) {
	if u.Channel == "" || u.ToolName == "" {
		return store.PermissionAllowance{}, false, invalid("a permission use needs a channel and a tool name")
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var granted int64
		err := tx.QueryRowContext(ctx, `SELECT channel, thread, tool_name, scope, granted_by, granted_at, prompt_id
			FROM permission_allowances WHERE channel = ? AND thread = ? AND tool_name = ?
			ORDER BY scope = 'conversation' DESC LIMIT 1`, u.Channel, u.Thread, u.ToolName).
			Scan(&a.Channel, &a.Thread, &a.ToolName, &a.Scope, &a.GrantedBy, &granted, &a.PromptID)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil
		case err != nil:
			return fmt.Errorf("store: permission allowance: %w", err)
		}
		a.GrantedAt, allowed = fromNanos(granted), true
		detail, err := json.Marshal(map[string]any{
			"tool_name": u.ToolName, "scope": a.Scope, "granted_by": a.GrantedBy, "granted_by_prompt": a.PromptID,
			"agent": u.Agent, "response_id": u.ResponseID, "call_id": u.CallID, "tool_use_id": u.ToolUseID,
		})
		if err != nil {
			return fmt.Errorf("store: audit detail: %w", err)
		}
		_, err = insertAudit(ctx, tx, store.NewAuditEntry{
			Actor: primaryActor, Action: store.ActionPermissionAutoAllow,
			Subject: store.ConversationSubject(u.Channel, u.Thread), Detail: detail,
		}, s.now())
		return err
	})
	if err != nil {
		return store.PermissionAllowance{}, false, err
	}
	return a, allowed, nil
}

// ListPermissionAllowances implements store.Prompts.
func (s *Store) ListPermissionAllowances(ctx context.Context, channel, thread string) ([]store.PermissionAllowance, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT channel, thread, tool_name, scope, granted_by, granted_at, prompt_id
		FROM permission_allowances WHERE ? = '' OR (channel = ? AND thread = ?) ORDER BY granted_at DESC, tool_name`,
		channel, channel, thread)
	if err != nil {
		return nil, fmt.Errorf("store: permission allowances: %w", err)
	}
	defer rows.Close()
	var out []store.PermissionAllowance
	for rows.Next() {
		var a store.PermissionAllowance
		var granted int64
		if err := rows.Scan(&a.Channel, &a.Thread, &a.ToolName, &a.Scope, &a.GrantedBy, &granted, &a.PromptID); err != nil {
			return nil, fmt.Errorf("store: permission allowances: %w", err)
		}
		a.GrantedAt = fromNanos(granted)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: permission allowances: %w", err)
	}
	return out, nil
}

// RevokePermissionAllowance implements store.Prompts.
func (s *Store) RevokePermissionAllowance(ctx context.Context, a store.PermissionAllowance, actor string) error {
	if actor == "" || a.Channel == "" || a.ToolName == "" || a.Scope == "" {
		return invalid("revoking an allowance needs an actor, a channel, a tool name and a scope")
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		var grantedBy string
		err := tx.QueryRowContext(ctx, `DELETE FROM permission_allowances
			WHERE channel = ? AND thread = ? AND tool_name = ? AND scope = ? RETURNING granted_by`,
			a.Channel, a.Thread, a.ToolName, a.Scope).Scan(&grantedBy)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("%w: no %s allowance of %s in this conversation", store.ErrNotFound, a.Scope, a.ToolName)
		case err != nil:
			return fmt.Errorf("store: revoke allowance: %w", err)
		}
		detail, err := json.Marshal(map[string]any{"tool_name": a.ToolName, "scope": a.Scope, "granted_by": grantedBy})
		if err != nil {
			return fmt.Errorf("store: audit detail: %w", err)
		}
		_, err = insertAudit(ctx, tx, store.NewAuditEntry{
			Actor: actor, Action: store.ActionPermissionRevoke,
			Subject: store.ConversationSubject(a.Channel, a.Thread), Detail: detail,
		}, s.now())
		return err
	})
}
