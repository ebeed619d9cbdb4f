package main

import (
	"context"
	"flag"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
)

var promptStatuses = map[string]operatorv1.PromptStatus{
	"pending": operatorv1.PromptStatus_PROMPT_STATUS_PENDING, "approved": operatorv1.PromptStatus_PROMPT_STATUS_APPROVED,
	"denied": operatorv1.PromptStatus_PROMPT_STATUS_DENIED, "expired": operatorv1.PromptStatus_PROMPT_STATUS_EXPIRED,
}

var promptKinds = map[string]operatorv1.PromptKind{
	"approval": operatorv1.PromptKind_PROMPT_KIND_APPROVAL, "permission": operatorv1.PromptKind_PROMPT_KIND_PERMISSION,
}

// allowScopes are the decisions of `prompts allow --scope`.
var allowScopes = map[string]operatorv1.Decision{
	"once": operatorv1.Decision_DECISION_ALLOW_ONCE, "thread": operatorv1.Decision_DECISION_ALLOW_THREAD,
	"conversation": operatorv1.Decision_DECISION_ALLOW_CONVERSATION,
}

var promptCommands = []command{
	listCommand("prompts", "list request_approval and permission_prompt prompts, newest first",
		[]string{"ID", "KIND", "STATUS", "AGENT", "CONVERSATION", "REQUESTER", "DEADLINE", "TITLE OR TOOL"},
		func(pr *operatorv1.Prompt) []string {
			return []string{id(pr.GetId()), word(pr.GetKind()), word(pr.GetStatus()),
				pr.GetAgent(), conversationText(pr.GetConversation()), pr.GetRequester(), when(pr.GetDeadline()), promptSubject(pr)}
		},
		func(fs *flag.FlagSet) fetchPage[*operatorv1.Prompt] {
			status := newChoice(promptStatuses)
			fs.Var(status, "status", "only prompts in this state: "+status.names())
			kind := newChoice(promptKinds)
			fs.Var(kind, "kind", "only prompts of this kind: "+kind.names())
			var conv conversationFlags
			conv.register(fs)
			return func(ctx context.Context, c *cli, size uint32, token string) ([]*operatorv1.Prompt, string, error) {
				filter, err := conv.filter()
				if err != nil {
					return nil, "", err
				}
				resp, err := c.api.ListPrompts(ctx, &operatorv1.ListPromptsRequest{Status: status.value, Kind: kind.value, Conversation: filter, PageSize: size, PageToken: token})
				return resp.GetPrompts(), resp.GetNextPageToken(), err
			}
		}),
	recordCommand("prompts", "show", "prompt id", "show one prompt", showPrompt,
		noFlags(func(ctx context.Context, c *cli, n uint64) (*operatorv1.Prompt, error) {
			resp, err := c.api.GetPrompt(ctx, &operatorv1.GetPromptRequest{PromptId: n})
			return resp.GetPrompt(), err
		})),
	decidePromptCommand("approve", "approve a pending request_approval prompt", func(fs *flag.FlagSet) (func() (operatorv1.Decision, error), *string) {
		return func() (operatorv1.Decision, error) { return operatorv1.Decision_DECISION_APPROVE, nil }, fs.String("m", "", "feedback for the agent")
	}),
	decidePromptCommand("allow", "allow a pending permission_prompt, for --scope once, thread or conversation", func(fs *flag.FlagSet) (func() (operatorv1.Decision, error), *string) {
		scope := newChoice(allowScopes)
		scope.Set("once")
		fs.Var(scope, "scope", "for how long: "+scope.names())
		return func() (operatorv1.Decision, error) { return scope.value, nil }, new(string)
	}),
	decidePromptCommand("deny", "deny a pending prompt, with optional feedback (-m)", func(fs *flag.FlagSet) (func() (operatorv1.Decision, error), *string) {
		return func() (operatorv1.Decision, error) { return operatorv1.Decision_DECISION_DENY, nil }, fs.String("m", "", "feedback for the agent")
	}),
}

// decidePromptCommand decides a prompt: flags registers the verb's flags and returns its
// decision (checked when the command runs) and the feedback text.
func decidePromptCommand(verb, summary string, flags func(fs *flag.FlagSet) (func() (operatorv1.Decision, error), *string)) command {
	return recordCommand("prompts", verb, "prompt id", summary, showPrompt,
		func(fs *flag.FlagSet) func(context.Context, *cli, uint64) (*operatorv1.Prompt, error) {
			decision, text := flags(fs)
			return func(ctx context.Context, c *cli, n uint64) (*operatorv1.Prompt, error) {
				d, err := decision()
				if err != nil {
					return nil, err
				}
				resp, err := c.api.DecidePrompt(ctx, &operatorv1.DecidePromptRequest{PromptId: n, Decision: d, Text: *text})
				return resp.GetPrompt(), err
			}
		})
}

func promptSubject(p *operatorv1.Prompt) string {
	if p.GetKind() == operatorv1.PromptKind_PROMPT_KIND_PERMISSION {
		return p.GetToolName()
	}
	return p.GetTitle()
}

func showPrompt(c *cli, p *operatorv1.Prompt) error {
	if c.global.json {
		return c.emit(p)
	}
	return c.fields("id", id(p.GetId()), "kind", word(p.GetKind()), "status", word(p.GetStatus()),
		"agent", p.GetAgent(), "conversation", conversationText(p.GetConversation()), "requester", p.GetRequester(),
		"title", p.GetTitle(), "details", p.GetDetails(), "tool", p.GetToolName(), "input", p.GetMaskedInputJson(),
		"created", at(p.GetCreatedAt()), "deadline", at(p.GetDeadline()), "decided by", p.GetDecidedBy(), "decision", word(p.GetDecision()), "feedback", p.GetFeedback())
}
