package interaction

import (
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/store"
)

// Defaults of request_approval's optional texts (contract: interaction controls).
const (
	DefaultApprovalTitle = "Approval requested"
	DefaultApproveLabel  = "Approve"
	DefaultDenyLabel     = "Deny"
)

func requestApprovalFunction() catalog.Function {
	return catalog.Function{
		Name: "request_approval",
		Description: "Ask the people of this conversation to approve something you intend to do (a plan, a risky step) and wait for their decision, " +
			"at most about " + plainDuration(DefaultPromptWait) + ". It is not a clarification form: do not use it to ask questions or to collect information. " +
			`Returns a JSON text {"approved": bool, "feedback": string, "decided_by": string}: feedback carries a denial's reason or requested changes. ` +
			"Continue work that depends on it only after an affirmative decision (approved true), and use the feedback: do what it asks, or stop and say why. " +
			"No decision in time means not approved. An approval covers only what the details describe.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"details":{"type":"string","description":"What you ask to do and why, complete enough to decide on (at most 8000 characters)."},` +
			`"title":{"type":"string","description":"A short heading (at most 200 characters; default \"Approval requested\")."},` +
			`"approve_label":{"type":"string","description":"The approve button's text (at most 60 characters; default \"Approve\")."},` +
			`"deny_label":{"type":"string","description":"The deny button's text (at most 60 characters; default \"Deny\")."}},` +
			`"required":["details"],"additionalProperties":false}`),
		// The call waits for a person's decision.
		Traits: catalog.Traits{UserInput: true},
	}
}

func (s *Prompts) requestApproval(ctx context.Context, call catalog.Call) (catalog.Result, error) {
	p, err := approvalPrompt(call)
	if err != nil {
		return catalog.Result{}, err
	}
	ended := s.postAndWait(ctx, call, p)
	b, err := canonjson.Marshal(map[string]any{
		"approved": ended.Status == store.PromptApproved, "feedback": ended.Feedback, "decided_by": ended.DecidedBy,
	})
	if err != nil {
		return catalog.Result{}, err
	}
	return catalog.Result{Value: string(b)}, nil
}

// approvalPrompt validates request_approval's arguments and applies the defaults.
func approvalPrompt(call catalog.Call) (store.NewPrompt, error) {
	id := call.Identity
	p := store.NewPrompt{
		Kind: store.PromptApproval, Channel: id.Channel, Thread: id.Thread, Requester: id.Requester, Agent: id.Agent,
		ResponseID: id.ResponseID, CallID: call.ID,
	}
	var err error
	if p.Details, err = boundedText(call.Arguments, "details", "", store.MaxPromptDetails); err != nil {
		return p, err
	}
	if p.Details == "" {
		return p, fmt.Errorf("details is empty: say what you ask to be approved")
	}
	if p.Title, err = boundedText(call.Arguments, "title", DefaultApprovalTitle, store.MaxPromptTitle); err != nil {
		return p, err
	}
	if p.ApproveLabel, err = boundedText(call.Arguments, "approve_label", DefaultApproveLabel, store.MaxPromptLabel); err != nil {
		return p, err
	}
	if p.DenyLabel, err = boundedText(call.Arguments, "deny_label", DefaultDenyLabel, store.MaxPromptLabel); err != nil {
		return p, err
	}
	return p, nil
}

// boundedText returns a string argument trimmed, or def when it is absent or blank; more than
// most characters is an error naming the limit.
func boundedText(args map[string]any, name, def string, most int) (string, error) {
	t, err := stringArg(args, name)
	if err != nil {
		return "", err
	}
	if n := utf8.RuneCountInString(t); n > most {
		return "", fmt.Errorf("%s is %d characters; at most %d are allowed", name, n, most)
	}
	if t == "" {
		return def, nil
	}
	return t, nil
}
