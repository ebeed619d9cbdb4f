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
