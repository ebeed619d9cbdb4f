package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// Each way a prompt leaves pending is one transaction: a statement that changes the prompt
// only while it is pending (the compare-and-swap), then what goes with it (an allowance) and
// its audit entry, so a lost race writes none of them.

// DecidePrompt implements store.Prompts.
func (s *Store) DecidePrompt(ctx context.Context, id int64, actor, decision, feedback string) (store.Prompt, error) {
	if actor == "" {
		return store.Prompt{}, invalid("a decision needs an actor")
	}
	if err := checkChars("a decision's feedback", feedback, 0, store.MaxPromptText); err != nil {
		return store.Prompt{}, err
	}
	var out store.Prompt
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		p, err := promptIn(ctx, tx, id)
		if err != nil {
			return err
		}
		if !store.DecisionFits(p.Kind, decision) {
			return invalid("a %s prompt cannot be decided %q", p.Kind, decision)
		}
		now := s.now()
		// Past its deadline the waiting call has given up (denied), even if closing the
		// record failed: it can never be decided.
		if p.Status == store.PromptPending && !now.Before(p.Deadline) {
			return fmt.Errorf("%w: cannot decide prompt %d: its wait ended at %s", store.ErrConflict, id, p.Deadline.UTC().Format(time.RFC3339))
		}
		if err := casPrompt(ctx, tx, p, "decide", `UPDATE prompts SET status = ?, decision = ?, decided_by = ?, decided_at = ?,
			feedback = ? WHERE id = ? AND status = 'pending'`,
			string(store.DecisionStatus(decision)), decision, actor, nanos(now), feedback, id); err != nil {
			return err
		}
		if scope := allowanceScope(decision); scope != "" {
			if _, err := tx.ExecContext(ctx, `INSERT INTO permission_allowances
				(channel, thread, tool_name, scope, granted_by, granted_at, prompt_id) VALUES (?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (channel, thread, tool_name, scope) DO UPDATE
				SET granted_by = excluded.granted_by, granted_at = excluded.granted_at, prompt_id = excluded.prompt_id`,
				p.Channel, p.Thread, p.ToolName, scope, actor, nanos(now), id); err != nil {
				return fmt.Errorf("store: allow %s: %w", p.ToolName, err)
			}
		}
		detail := map[string]any{"kind": string(p.Kind), "decision": decision, "feedback": feedback}
		if p.Kind == store.PromptPermission {
			detail["tool_name"] = p.ToolName
		}
		if err := promptAudit(ctx, tx, now, actor, store.ActionPromptDecide, id, detail); err != nil {
			return err
		}
		out, err = promptIn(ctx, tx, id)
		return err
	})
	return out, err
}

// allowanceScope is the allowance a decision grants, if any.
func allowanceScope(decision string) string {
	switch decision {
	case store.DecisionAllowThread:
		return store.AllowThread
	case store.DecisionAllowConversation:
		return store.AllowConversation
	}
	return ""
}

// ExpirePrompt implements store.Prompts.
func (s *Store) ExpirePrompt(ctx context.Context, id int64, reason string) (store.Prompt, error) {
	if err := checkChars("an expiry reason", reason, 1, store.MaxPromptText); err != nil {
		return store.Prompt{}, err
	}
	var out store.Prompt
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		p, err := promptIn(ctx, tx, id)
		if err != nil {
			return err
		}
		now := s.now()
		if err := casPrompt(ctx, tx, p, "expire", `UPDATE prompts SET status = 'expired', decided_at = ?, feedback = ?
			WHERE id = ? AND status = 'pending'`, nanos(now), reason, id); err != nil {
			return err
		}
		if err := promptAudit(ctx, tx, now, primaryActor, store.ActionPromptExpire, id,
			map[string]any{"kind": string(p.Kind), "reason": reason}); err != nil {
			return err
		}
		out, err = promptIn(ctx, tx, id)
		return err
	})
	return out, err
}

// ExpirePendingPrompts implements store.Prompts.
func (s *Store) ExpirePendingPrompts(ctx context.Context, reason string) ([]store.Prompt, error) {
	if err := checkChars("an expiry reason", reason, 1, store.MaxPromptText); err != nil {
		return nil, err
	}
	var out []store.Prompt
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		pending, err := queryPrompts(ctx, tx, "status = 'pending'", nil, -1) // LIMIT -1: all of them
		if err != nil {
			return err
		}
		now := s.now()
		if _, err := tx.ExecContext(ctx, `UPDATE prompts SET status = 'expired', decided_at = ?, feedback = ?
			WHERE status = 'pending'`, nanos(now), reason); err != nil {
			return fmt.Errorf("store: expire pending prompts: %w", err)
		}
		for _, p := range pending {
			if err := promptAudit(ctx, tx, now, primaryActor, store.ActionPromptExpire, p.ID,
				map[string]any{"kind": string(p.Kind), "reason": reason}); err != nil {
				return err
			}
			p.Status, p.DecidedAt, p.Feedback = store.PromptExpired, fromNanos(nanos(now)), reason
			out = append(out, p)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM permission_allowances WHERE scope = 'thread'`); err != nil {
			return fmt.Errorf("store: drop thread allowances: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// casPrompt runs update, a statement that changes prompt p only while it is pending. When it
// changed nothing, the prompt left pending meanwhile: ErrConflict.
func casPrompt(ctx context.Context, tx *sql.Tx, p store.Prompt, verb, update string, args ...any) error {
	res, err := tx.ExecContext(ctx, update, args...)
	if err != nil {
		return fmt.Errorf("store: %s prompt %d: %w", verb, p.ID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: %s prompt %d: %w", verb, p.ID, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: cannot %s prompt %d: it is %s", store.ErrConflict, verb, p.ID, p.Status)
	}
	return nil
}

// promptAudit appends a prompt's audit entry; detail gets the prompt's id added.
func promptAudit(ctx context.Context, tx *sql.Tx, now time.Time, actor, action string, id int64, detail map[string]any) error {
	detail["prompt"] = id
	b, err := json.Marshal(detail)
	if err != nil {
		return fmt.Errorf("store: audit detail: %w", err)
	}
	_, err = insertAudit(ctx, tx, store.NewAuditEntry{Actor: actor, Action: action, Subject: store.PromptSubject(id), Detail: b}, now)
	return err
}
