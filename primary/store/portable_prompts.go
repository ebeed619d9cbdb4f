package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// checkNewPrompt applies the rules of NewPrompt and returns the masked input as stored
// (compacted; nil for an approval).
func checkNewPrompt(p NewPrompt) (json.RawMessage, error) {
	switch {
	case !p.Kind.Valid():
		return nil, invalid("prompt kind %q is not approval or permission", p.Kind)
	case p.Channel == "":
		return nil, invalid("a prompt needs a channel")
	case p.Deadline.IsZero():
		return nil, invalid("a prompt needs a deadline")
	}
	for _, f := range []struct {
		what, text string
		most       int
	}{
		{"an approval's title", p.Title, MaxPromptTitle}, {"an approval's details", p.Details, MaxPromptDetails},
		{"an approval's approve label", p.ApproveLabel, MaxPromptLabel},
		{"an approval's deny label", p.DenyLabel, MaxPromptLabel},
		{"a tool name", p.ToolName, MaxToolName}, {"a tool use id", p.ToolUseID, MaxToolName},
	} {
		if err := checkChars(f.what, f.text, 0, f.most); err != nil {
			return nil, err
		}
	}
	if p.Kind == PromptApproval {
		if p.Details == "" || p.Title == "" || p.ApproveLabel == "" || p.DenyLabel == "" {
			return nil, invalid("an approval needs details, a title and both labels")
		}
		if p.ToolName != "" || p.ToolUseID != "" || p.MaskedInput != nil {
			return nil, invalid("an approval has no tool")
		}
		return nil, nil
	}
	if p.ToolName == "" {
		return nil, invalid("a permission prompt needs a tool name")
	}
	if p.Title != "" || p.Details != "" || p.ApproveLabel != "" || p.DenyLabel != "" {
		return nil, invalid("a permission prompt has no approval texts")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, p.MaskedInput); err != nil {
		return nil, invalid("a permission prompt's input must be one JSON value")
	}
	return buf.Bytes(), nil
}

// CreatePrompt implements Prompts.
func (p *Portable) CreatePrompt(ctx context.Context, np NewPrompt) (Prompt, error) {
	masked, err := checkNewPrompt(np)
	if err != nil {
		return Prompt{}, err
	}
	rec := Prompt{
		Kind: np.Kind, Channel: np.Channel, Thread: np.Thread, Requester: np.Requester, Agent: np.Agent,
		ResponseID: np.ResponseID, CallID: np.CallID, Title: np.Title, Details: np.Details,
		ApproveLabel: np.ApproveLabel, DenyLabel: np.DenyLabel, ToolName: np.ToolName, ToolUseID: np.ToolUseID,
		MaskedInput: masked, Status: PromptPending, CreatedAt: p.clock(), Deadline: np.Deadline,
	}
	var out Prompt
	err = p.update(ctx, func(tx Tx) error {
		id, err := tx.InsertPrompt(ctx, rec)
		if err != nil {
			return err
		}
		tellThread(ctx, tx, ThreadPrompt, id, ThreadOpened, rec.CreatedAt)
		out, err = tx.Prompt(ctx, id)
		return err
	})
	return out, err
}

// Prompt implements Prompts.
func (p *Portable) Prompt(ctx context.Context, id int64) (Prompt, error) { return p.d.Prompt(ctx, id) }

// ListPrompts implements Prompts.
func (p *Portable) ListPrompts(ctx context.Context, f PromptFilter) ([]Prompt, error) {
	var err error
	if f.Limit, err = listLimit(f.Limit); err != nil {
		return nil, err
	}
	if f.Status != "" && !f.Status.Valid() {
		return nil, invalid("prompt status %q is unknown", f.Status)
	}
	if f.Kind != "" && !f.Kind.Valid() {
		return nil, invalid("prompt kind %q is unknown", f.Kind)
	}
	if err := checkBeforeID(f.BeforeID); err != nil {
		return nil, err
	}
	return p.d.ListPrompts(ctx, f)
}

// DecidePrompt implements Prompts: pending → approved | denied, with the allowance the
// decision grants and the audit entry, in one transaction.
func (p *Portable) DecidePrompt(ctx context.Context, id int64, actor, decision, feedback string) (Prompt, error) {
	if actor == "" {
		return Prompt{}, invalid("a decision needs an actor")
	}
	if err := checkChars("a decision's feedback", feedback, 0, MaxPromptText); err != nil {
		return Prompt{}, err
	}
	at := p.clock()
	var out Prompt
	err := p.update(ctx, func(tx Tx) error {
		pr, err := tx.Prompt(ctx, id)
		if err != nil {
			return err
		}
		if !DecisionFits(pr.Kind, decision) {
			return invalid("a %s prompt cannot be decided %q", pr.Kind, decision)
		}
		// Past its deadline the waiting call has given up (denied), even if closing the
		// record failed: it can never be decided.
		if pr.Status == PromptPending && !at.Before(pr.Deadline) {
			return fmt.Errorf("%w: cannot decide prompt %d: its wait ended at %s", ErrConflict, id, pr.Deadline.UTC().Format(time.RFC3339))
		}
		next := pr
		next.Status, next.Decision, next.DecidedBy, next.DecidedAt, next.Feedback = DecisionStatus(decision), decision, actor, at, feedback
		if err := casPrompt(ctx, tx, pr, next, "decide"); err != nil {
			return err
		}
		if scope := allowanceScope(decision); scope != "" {
			if err := tx.PutPermissionAllowance(ctx, PermissionAllowance{
				Channel: pr.Channel, Thread: pr.Thread, ToolName: pr.ToolName, Scope: scope, GrantedBy: actor, GrantedAt: at, PromptID: id,
			}); err != nil {
				return err
			}
		}
		detail := map[string]any{"prompt": id, "kind": string(pr.Kind), "decision": decision, "feedback": feedback}
		if pr.Kind == PromptPermission {
			detail["tool_name"] = pr.ToolName
		}
		if err := audit(ctx, tx, at, actor, ActionPromptDecide, PromptSubject(id), detail); err != nil {
			return err
		}
		out, err = tx.Prompt(ctx, id)
		return err
	})
	return out, err
}

// allowanceScope is the allowance a decision grants, if any.
func allowanceScope(decision string) string {
	switch decision {
	case DecisionAllowThread:
		return AllowThread
	case DecisionAllowConversation:
		return AllowConversation
	}
	return ""
}

// casPrompt writes next over prompt prev, which must still be pending; ErrConflict when it
// is not.
func casPrompt(ctx context.Context, tx Tx, prev, next Prompt, verb string) error {
	ok := false
	if prev.Status == PromptPending {
		var err error
		if ok, err = tx.UpdatePrompt(ctx, PromptPending, next); err != nil {
			return err
		}
	}
	if ok {
		// Decided or expired, a prompt is closed: its call has its answer.
		tellThread(ctx, tx, ThreadPrompt, prev.ID, ThreadClosed, next.DecidedAt)
	}
	if !ok {
		cur, err := tx.Prompt(ctx, prev.ID)
		if err != nil {
			return err
		}
		return fmt.Errorf("%w: cannot %s prompt %d: it is %s", ErrConflict, verb, prev.ID, cur.Status)
	}
	return nil
}

// expire moves pending prompt pr to expired with reason, with its audit entry.
func expire(ctx context.Context, tx Tx, pr Prompt, reason string, at time.Time) (Prompt, error) {
	next := pr
	next.Status, next.DecidedAt, next.Feedback = PromptExpired, at, reason
	if err := casPrompt(ctx, tx, pr, next, "expire"); err != nil {
		return Prompt{}, err
	}
	if err := audit(ctx, tx, at, primaryActor, ActionPromptExpire, PromptSubject(pr.ID),
		map[string]any{"prompt": pr.ID, "kind": string(pr.Kind), "reason": reason}); err != nil {
		return Prompt{}, err
	}
	return next, nil
}

// ExpirePrompt implements Prompts.
func (p *Portable) ExpirePrompt(ctx context.Context, id int64, reason string) (Prompt, error) {
	if err := checkChars("an expiry reason", reason, 1, MaxPromptText); err != nil {
		return Prompt{}, err
	}
	at := p.clock()
	var out Prompt
	err := p.update(ctx, func(tx Tx) error {
		pr, err := tx.Prompt(ctx, id)
		if err != nil {
			return err
		}
		if _, err := expire(ctx, tx, pr, reason, at); err != nil {
			return err
		}
		out, err = tx.Prompt(ctx, id)
		return err
	})
	return out, err
}

// ExpirePendingPrompts implements Prompts.
func (p *Portable) ExpirePendingPrompts(ctx context.Context, reason string) ([]Prompt, error) {
	if err := checkChars("an expiry reason", reason, 1, MaxPromptText); err != nil {
		return nil, err
	}
	at := p.clock()
	var out []Prompt
	err := p.update(ctx, func(tx Tx) error {
		out = nil
		pending, err := tx.ListPrompts(ctx, PromptFilter{Status: PromptPending})
		if err != nil {
			return err
		}
		for _, pr := range pending {
			if pr.ParkedJob != 0 { // nobody waits on it, by design: its decision resumes the job
				continue
			}
			expired, err := expire(ctx, tx, pr, reason, at)
			if err != nil {
				return err
			}
			out = append(out, expired)
		}
		return tx.DeletePermissionAllowances(ctx, AllowThread)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// UsePermissionAllowance implements Prompts. The look-up and the audit entry of a use share
// one transaction, so every request an allowance answered is in the log.
func (p *Portable) UsePermissionAllowance(ctx context.Context, u PermissionUse) (a PermissionAllowance, allowed bool, err error) {
	if u.Channel == "" || u.ToolName == "" {
		return PermissionAllowance{}, false, invalid("a permission use needs a channel and a tool name")
	}
	at := p.clock()
	err = p.update(ctx, func(tx Tx) error {
		a, allowed = PermissionAllowance{}, false
		list, err := tx.PermissionAllowances(ctx, AllowanceFilter{Channel: u.Channel, Thread: u.Thread, ToolName: u.ToolName})
		if err != nil {
			return err
		}
		for _, l := range list {
			// An allowance answers the agent whose request was allowed, never another agent
			// of the conversation: people allowed what they saw that agent ask.
			granting, err := tx.Prompt(ctx, l.PromptID)
			if err != nil {
				return err
			}
			if granting.Agent != u.Agent {
				continue
			}
			// The newest, a conversation-scoped one before a thread-scoped one.
			if !allowed || (l.Scope == AllowConversation && a.Scope != AllowConversation) {
				a, allowed = l, true
			}
		}
		if !allowed {
			return nil
		}
		return audit(ctx, tx, at, primaryActor, ActionPermissionAutoAllow, ConversationSubject(u.Channel, u.Thread), map[string]any{
			"tool_name": u.ToolName, "scope": a.Scope, "granted_by": a.GrantedBy, "granted_by_prompt": a.PromptID,
			"agent": u.Agent, "response_id": u.ResponseID, "call_id": u.CallID, "tool_use_id": u.ToolUseID,
		})
	})
	if err != nil {
		return PermissionAllowance{}, false, err
	}
	return a, allowed, nil
}

// ListPermissionAllowances implements Prompts.
func (p *Portable) ListPermissionAllowances(ctx context.Context, f AllowanceFilter) ([]PermissionAllowance, error) {
	var err error
	if f.Limit, err = listLimit(f.Limit); err != nil {
		return nil, err
	}
	if err := checkTimePosition(f.After.GrantedAt, f.After.Channel); err != nil {
		return nil, err
	}
	return p.d.PermissionAllowances(ctx, f)
}

// RevokePermissionAllowance implements Prompts.
func (p *Portable) RevokePermissionAllowance(ctx context.Context, a PermissionAllowance, actor string) error {
	if actor == "" || a.Channel == "" || a.ToolName == "" || a.Scope == "" {
		return invalid("revoking an allowance needs an actor, a channel, a tool name and a scope")
	}
	at := p.clock()
	return p.update(ctx, func(tx Tx) error {
		gone, err := tx.DeletePermissionAllowance(ctx, a)
		if errors.Is(err, ErrNotFound) {
			return fmt.Errorf("%w: no %s allowance of %s in this conversation", ErrNotFound, a.Scope, a.ToolName)
		} else if err != nil {
			return err
		}
		return audit(ctx, tx, at, actor, ActionPermissionRevoke, ConversationSubject(a.Channel, a.Thread),
			map[string]any{"tool_name": a.ToolName, "scope": a.Scope, "granted_by": gone.GrantedBy})
	})
}
