package main

import (
	"context"
	"flag"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
)

var callApprovalStatuses = map[string]operatorv1.CallApprovalStatus{
	"waiting": operatorv1.CallApprovalStatus_CALL_APPROVAL_STATUS_WAITING, "approved": operatorv1.CallApprovalStatus_CALL_APPROVAL_STATUS_APPROVED,
	"claimed": operatorv1.CallApprovalStatus_CALL_APPROVAL_STATUS_CLAIMED, "done": operatorv1.CallApprovalStatus_CALL_APPROVAL_STATUS_DONE,
	"interrupted": operatorv1.CallApprovalStatus_CALL_APPROVAL_STATUS_INTERRUPTED, "denied": operatorv1.CallApprovalStatus_CALL_APPROVAL_STATUS_DENIED,
}

var callApprovalCommands = []command{
	{noun: "call-approvals", verb: "ls", summary: "list tool calls waiting for (or past) a person's confirmation, newest first", setup: func(fs *flag.FlagSet) runner {
		status := newChoice(callApprovalStatuses)
		fs.Var(status, "status", "only calls in this state: "+status.names())
		var conv conversationFlags
		conv.register(fs)
		var p page
		p.register(fs)
		return online(func(ctx context.Context, c *cli, _ []string) error {
			filter, err := conv.filter()
			if err != nil {
				return err
			}
			list, err := collect(ctx, p, func(ctx context.Context, size uint32, token string) ([]*operatorv1.CallApproval, string, error) {
				ctx, cancel := c.call(ctx)
				defer cancel()
				resp, err := c.api.ListCallApprovals(ctx, &operatorv1.ListCallApprovalsRequest{Status: status.value, Conversation: filter, PageSize: size, PageToken: token})
				return resp.GetCallApprovals(), resp.GetNextPageToken(), err
			})
			if err != nil {
				return err
			}
			if c.global.json {
				return emitAll(c, list)
			}
			rows := make([][]string, 0, len(list))
			for _, a := range list {
				rows = append(rows, []string{id(a.GetId()), enumName(a.GetStatus().String(), "CALL_APPROVAL_STATUS_"), a.GetAgent(),
					conversationText(a.GetConversation()), a.GetRequester(), a.GetToolkit() + "." + a.GetFunction(), when(a.GetCreatedAt()), a.GetArgumentsJson()})
			}
			return c.table([]string{"ID", "STATUS", "AGENT", "CONVERSATION", "REQUESTER", "FUNCTION", "CREATED", "ARGUMENTS"}, rows)
		})
	}},
	{noun: "call-approvals", verb: "show", args: arity{"ID"}, summary: "show one call approval", setup: func(fs *flag.FlagSet) runner {
		return online(func(ctx context.Context, c *cli, args []string) error {
			n, err := parseID("call approval id", args[0])
			if err != nil {
				return err
			}
			ctx, cancel := c.call(ctx)
			defer cancel()
			resp, err := c.api.GetCallApproval(ctx, &operatorv1.GetCallApprovalRequest{CallApprovalId: n})
			if err != nil {
				return err
			}
			return showCallApproval(c, resp.GetCallApproval())
		})
	}},
	decideCallCommand("approve", operatorv1.Decision_DECISION_APPROVE, "approve a waiting call: it runs once (admins)"),
	decideCallCommand("deny", operatorv1.Decision_DECISION_DENY, "deny a waiting call, with an optional note (-m) that becomes its failure"),
}

func decideCallCommand(verb string, decision operatorv1.Decision, summary string) command {
	return command{noun: "call-approvals", verb: verb, args: arity{"ID"}, summary: summary, setup: func(fs *flag.FlagSet) runner {
		note := fs.String("m", "", "a note, written to the audit log")
		return online(func(ctx context.Context, c *cli, args []string) error {
			n, err := parseID("call approval id", args[0])
			if err != nil {
				return err
			}
			ctx, cancel := c.call(ctx)
			defer cancel()
			resp, err := c.api.DecideCallApproval(ctx, &operatorv1.DecideCallApprovalRequest{CallApprovalId: n, Decision: decision, Note: *note})
			if err != nil {
				return err
			}
			return showCallApproval(c, resp.GetCallApproval())
		})
	}}
}

func showCallApproval(c *cli, a *operatorv1.CallApproval) error {
	if c.global.json {
		return c.emit(a)
	}
	return c.fields("id", id(a.GetId()), "status", enumName(a.GetStatus().String(), "CALL_APPROVAL_STATUS_"), "agent", a.GetAgent(),
		"conversation", conversationText(a.GetConversation()), "requester", a.GetRequester(), "function", a.GetToolkit()+"."+a.GetFunction(),
		"arguments", a.GetArgumentsJson(), "call", a.GetCallId(), "created", at(a.GetCreatedAt()), "decided by", a.GetDecidedBy(),
		"note", a.GetNote(), "outcome", a.GetOutcomeJson())
}
