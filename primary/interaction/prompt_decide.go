package interaction

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/turncli/turncli/primary/store"
)

// PromptDecision is an operator's decision on a prompt.
type PromptDecision struct {
	// Action is one of the store's Decision constants (store.DecisionApprove, …) that fits the
	// prompt's kind.
	Action string
	// Text is the feedback: a denial's reason, a comment's requested changes (required for a
	// comment), at most store.MaxPromptText characters after trimming.
	Text string
}

// ListPrompts returns the prompts matching f, newest first (as store.Prompts.ListPrompts).
func (s *Prompts) ListPrompts(ctx context.Context, f store.PromptFilter) ([]store.Prompt, error) {
	ps := s.cfg.Store
	return ps.ListPrompts(ctx, f)
}

// Prompt returns one prompt; store.ErrNotFound when it does not exist.
func (s *Prompts) Prompt(ctx context.Context, id int64) (store.Prompt, error) {
	ps := s.cfg.Store
	return ps.Prompt(ctx, id)
}

// DecidePrompt records an operator's decision on a pending prompt and wakes the call waiting
// for it. Errors: store.ErrNotFound for an unknown id; store.ErrInvalid for an action that
// does not fit the prompt's kind, an over-long text or a comment without text;
// store.ErrForbidden when a member allows a tool for the whole conversation (admins only);
// store.ErrConflict when the prompt is no longer pending (decided or expired).
func (s *Prompts) DecidePrompt(ctx context.Context, id int64, by store.Operator, d PromptDecision) (store.Prompt, error) {
	ps := s.cfg.Store
	p, err := ps.Prompt(ctx, id)
	if err != nil {
		return store.Prompt{}, err
	}
	text := strings.TrimSpace(d.Text)
	switch {
	case !store.DecisionFits(p.Kind, d.Action):
		return store.Prompt{}, fmt.Errorf("%w: %s", store.ErrInvalid, actionsOf(p.Kind, d.Action))
	case !utf8.ValidString(text):
		return store.Prompt{}, fmt.Errorf("%w: the text must be valid UTF-8", store.ErrInvalid)
	case utf8.RuneCountInString(text) > store.MaxPromptText:
		return store.Prompt{}, fmt.Errorf("%w: the text is %d characters; at most %d are allowed",
			store.ErrInvalid, utf8.RuneCountInString(text), store.MaxPromptText)
	case d.Action == store.DecisionComment && text == "":
		return store.Prompt{}, fmt.Errorf("%w: a comment needs text: say what should change", store.ErrInvalid)
	case by.Name == "":
		return store.Prompt{}, fmt.Errorf("%w: a decision needs the operator's name", store.ErrInvalid)
	case !by.Role.Valid():
		return store.Prompt{}, fmt.Errorf("%w: %q has no operator role", store.ErrForbidden, by.Name)
	case d.Action == store.DecisionAllowConversation && CheckConversationAllower(by) != nil:
		return store.Prompt{}, CheckConversationAllower(by)
	case p.Status != store.PromptPending:
		return store.Prompt{}, fmt.Errorf("%w: prompt %d is %s and can no longer be decided", store.ErrConflict, id, p.Status)
	}
	decided, err := ps.DecidePrompt(ctx, id, by.Name, d.Action, text)
	if err != nil {
		return store.Prompt{}, err
	}
	s.log.Info("prompt decided", "prompt", id, "kind", decided.Kind, "decision", decided.Decision, "by", by.Name)
	s.publishPrompt("prompt.decided", decided)
	return decided, nil
}

// CheckConversationAllower refuses a person who may not allow a tool for a whole
// conversation: only an admin may. DecidePrompt applies it; a surface that offers only the
// decisions a person may take (decision links) asks it first.
func CheckConversationAllower(by store.Operator) error {
	if by.Role != store.RoleAdmin {
		return fmt.Errorf("%w: only an admin can allow a tool for the whole conversation; %q is a %s; allow it once or for this thread instead",
			store.ErrForbidden, by.Name, by.Role)
	}
	return nil
}

// actionsOf says which actions a prompt of kind takes, and that action is not one of them.
func actionsOf(kind store.PromptKind, action string) string {
	if kind == store.PromptApproval {
		return fmt.Sprintf("an approval is decided with approve, deny or comment, not %q", action)
	}
	return fmt.Sprintf("a permission prompt is decided with allow_once, allow_thread, allow_conversation or deny, not %q", action)
}

// ExpirePendingPrompts is called once at boot, before anything is served: prompts still
// pending were left by the previous primary and nobody waits for their decision any more, so
// each expires (PromptRestartReason) and can never be decided; allowances granted for a
// thread end with the primary that granted them. It returns the prompts it expired.
func (s *Prompts) ExpirePendingPrompts(ctx context.Context) ([]store.Prompt, error) {
	ps := s.cfg.Store
	expired, err := ps.ExpirePendingPrompts(ctx, store.PromptRestartReason)
	if err != nil {
		return nil, err
	}
	for _, p := range expired {
		s.log.Info("prompt expired after restart", "prompt", p.ID, "kind", p.Kind)
		s.publishPrompt("prompt.expired", p)
	}
	return expired, nil
}

// publishPrompt puts a prompt's change on the live feed: only its masked input.
func (s *Prompts) publishPrompt(kind string, p store.Prompt) {
	s.cfg.Events.Publish(kind, store.PromptSubject(p.ID), promptView(p))
}

// promptView is a prompt as people see it on the live feed.
func promptView(p store.Prompt) map[string]any {
	v := map[string]any{
		"id": p.ID, "kind": string(p.Kind), "status": string(p.Status), "channel": p.Channel, "thread": p.Thread,
		"requester": p.Requester, "agent": p.Agent, "response_id": p.ResponseID, "call_id": p.CallID,
		"created_at": p.CreatedAt.Format(time.RFC3339Nano), "deadline": p.Deadline.Format(time.RFC3339Nano),
		"decided_by": p.DecidedBy, "decision": p.Decision, "feedback": p.Feedback,
	}
	if !p.DecidedAt.IsZero() {
		v["decided_at"] = p.DecidedAt.Format(time.RFC3339Nano)
	}
	switch p.Kind {
	case store.PromptApproval:
		v["title"], v["details"], v["approve_label"], v["deny_label"] = p.Title, p.Details, p.ApproveLabel, p.DenyLabel
	case store.PromptPermission:
		v["tool_name"], v["tool_use_id"], v["input"] = p.ToolName, p.ToolUseID, p.MaskedInput
	}
	return v
}

// promptAttrs are a prompt's log attributes: for a permission prompt the masked input only.
func promptAttrs(p store.Prompt) []any {
	attrs := []any{"prompt", p.ID, "kind", p.Kind, "channel", p.Channel, "thread", p.Thread, "agent", p.Agent, "call", p.CallID}
	if p.Kind == store.PromptPermission {
		attrs = append(attrs, "tool", p.ToolName, "input", string(p.MaskedInput))
	} else {
		attrs = append(attrs, "title", p.Title)
	}
	return attrs
}
