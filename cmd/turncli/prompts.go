package main

import (
	"context"
	"flag"
	"fmt"

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
	{noun: "prompts", verb: "ls", summary: "list request_approval and permission_prompt prompts, newest first", setup: func(fs *flag.FlagSet) runner {
		status := newChoice(promptStatuses)
		fs.Var(status, "status", "only prompts in this state: "+status.names())
		kind := newChoice(promptKinds)
		fs.Var(kind, "kind", "only prompts of this kind: "+kind.names())
		var conv conversationFlags
		conv.register(fs)
		var p page
		p.register(fs)
		return online(func(ctx context.Context, c *cli, _ []string) error {
			filter, err := conv.filter()
			if err != nil {
				return err
			}
			list, err := collect(ctx, p, func(ctx context.Context, size uint32, token string) ([]*operatorv1.Prompt, string, error) {
				ctx, cancel := c.call(ctx)
				defer cancel()
				resp, err := c.api.ListPrompts(ctx, &operatorv1.ListPromptsRequest{Status: status.value, Kind: kind.value, Conversation: filter, PageSize: size, PageToken: token})
				return resp.GetPrompts(), resp.GetNextPageToken(), err
			})
			if err != nil {
				return err
			}
			if c.global.json {
				return emitAll(c, list)
			}
			rows := make([][]string, 0, len(list))
			for _, pr := range list {
				rows = append(rows, []string{id(pr.GetId()), enumName(pr.GetKind().String(), "PROMPT_KIND_"), enumName(pr.GetStatus().String(), "PROMPT_STATUS_"),
					pr.GetAgent(), conversationText(pr.GetConversation()), pr.GetRequester(), when(pr.GetDeadline()), promptSubject(pr)})
			}
			return c.table([]string{"ID", "KIND", "STATUS", "AGENT", "CONVERSATION", "REQUESTER", "DEADLINE", "TITLE OR TOOL"}, rows)
		})
	}},
	{noun: "prompts", verb: "show", args: arity{"ID"}, summary: "show one prompt", setup: func(fs *flag.FlagSet) runner {
		return online(func(ctx context.Context, c *cli, args []string) error {
			n, err := parseID("prompt id", args[0])
			if err != nil {
				return err
			}
			ctx, cancel := c.call(ctx)
			defer cancel()
			resp, err := c.api.GetPrompt(ctx, &operatorv1.GetPromptRequest{PromptId: n})
			if err != nil {
				return err
			}
			return showPrompt(c, resp.GetPrompt())
		})
	}},
	{noun: "prompts", verb: "approve", args: arity{"ID"}, summary: "approve a pending request_approval prompt", setup: func(fs *flag.FlagSet) runner {
		text := fs.String("m", "", "feedback for the agent")
		return decidePrompt(func() (operatorv1.Decision, error) { return operatorv1.Decision_DECISION_APPROVE, nil }, text)
	}},
	{noun: "prompts", verb: "allow", args: arity{"ID"}, summary: "allow a pending permission_prompt, for --scope once, thread or conversation", setup: func(fs *flag.FlagSet) runner {
		scope := fs.String("scope", "once", "once, thread or conversation")
		return decidePrompt(func() (operatorv1.Decision, error) {
			d, ok := allowScopes[*scope]
			if !ok {
				return 0, fmt.Errorf("%w: --scope must be once, thread or conversation", errUsage)
			}
			return d, nil
		}, new(string))
	}},
	{noun: "prompts", verb: "deny", args: arity{"ID"}, summary: "deny a pending prompt, with optional feedback (-m)", setup: func(fs *flag.FlagSet) runner {
		text := fs.String("m", "", "feedback for the agent")
		return decidePrompt(func() (operatorv1.Decision, error) { return operatorv1.Decision_DECISION_DENY, nil }, text)
	}},
}

func decidePrompt(decision func() (operatorv1.Decision, error), text *string) runner {
	return online(func(ctx context.Context, c *cli, args []string) error {
		n, err := parseID("prompt id", args[0])
		if err != nil {
			return err
		}
		d, err := decision()
		if err != nil {
			return err
		}
		ctx, cancel := c.call(ctx)
		defer cancel()
		resp, err := c.api.DecidePrompt(ctx, &operatorv1.DecidePromptRequest{PromptId: n, Decision: d, Text: *text})
		if err != nil {
			return err
		}
		return showPrompt(c, resp.GetPrompt())
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
	decision := ""
	if p.GetDecision() != operatorv1.Decision_DECISION_UNSPECIFIED {
		decision = enumName(p.GetDecision().String(), "DECISION_")
	}
	return c.fields("id", id(p.GetId()), "kind", enumName(p.GetKind().String(), "PROMPT_KIND_"), "status", enumName(p.GetStatus().String(), "PROMPT_STATUS_"),
		"agent", p.GetAgent(), "conversation", conversationText(p.GetConversation()), "requester", p.GetRequester(),
		"title", p.GetTitle(), "details", p.GetDetails(), "tool", p.GetToolName(), "input", p.GetMaskedInputJson(),
		"created", at(p.GetCreatedAt()), "deadline", at(p.GetDeadline()), "decided by", p.GetDecidedBy(), "decision", decision, "feedback", p.GetFeedback())
}
