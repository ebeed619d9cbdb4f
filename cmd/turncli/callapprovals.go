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
	"expired": operatorv1.CallApprovalStatus_CALL_APPROVAL_STATUS_EXPIRED,
}

var callApprovalCommands = []command{
	listCommand("call-approvals", "list tool calls waiting for (or past) a person's confirmation, newest first",
		[]string{"ID", "STATUS", "AGENT", "CONVERSATION", "REQUESTER", "FUNCTION", "CREATED", "ARGUMENTS"},
		func(a *operatorv1.CallApproval) []string {
			return []string{id(a.GetId()), word(a.GetStatus()), a.GetAgent(),
				conversationText(a.GetConversation()), a.GetRequester(), a.GetToolkit() + "." + a.GetFunction(), when(a.GetCreatedAt()), a.GetArgumentsJson()}
		},
		func(fs *flag.FlagSet) fetchPage[*operatorv1.CallApproval] {
			status := newChoice(callApprovalStatuses)
			fs.Var(status, "status", "only calls in this state: "+status.names())
			var conv conversationFlags
			conv.register(fs)
			return func(ctx context.Context, c *cli, size uint32, token string) ([]*operatorv1.CallApproval, string, error) {
				filter, err := conv.filter()
				if err != nil {
					return nil, "", err
				}
				resp, err := c.api.ListCallApprovals(ctx, &operatorv1.ListCallApprovalsRequest{Status: status.value, Conversation: filter, PageSize: size, PageToken: token})
				return resp.GetCallApprovals(), resp.GetNextPageToken(), err
			}
		}),
	recordCommand("call-approvals", "show", "call approval id", "show one call approval", showCallApproval,
		noFlags(func(ctx context.Context, c *cli, n uint64) (*operatorv1.CallApproval, error) {
			resp, err := c.api.GetCallApproval(ctx, &operatorv1.GetCallApprovalRequest{CallApprovalId: n})
			return resp.GetCallApproval(), err
		})),
	decideCallCommand(operatorv1.Decision_DECISION_APPROVE, "approve a waiting call: it runs once (admins)"),
	decideCallCommand(operatorv1.Decision_DECISION_DENY, "deny a waiting call, with an optional note (-m) that becomes its failure"),
}

func decideCallCommand(decision operatorv1.Decision, summary string) command {
	return recordCommand("call-approvals", decisionWords[decision], "call approval id", summary, showCallApproval,
		func(fs *flag.FlagSet) func(context.Context, *cli, uint64) (*operatorv1.CallApproval, error) {
			note := fs.String("m", "", "a note, written to the audit log")
			return func(ctx context.Context, c *cli, n uint64) (*operatorv1.CallApproval, error) {
				resp, err := c.api.DecideCallApproval(ctx, &operatorv1.DecideCallApprovalRequest{CallApprovalId: n, Decision: decision, Note: *note})
				return resp.GetCallApproval(), err
			}
		})
}

func showCallApproval(c *cli, a *operatorv1.CallApproval) error {
	if c.global.json {
		return c.emit(a)
	}
	return c.fields("id", id(a.GetId()), "status", word(a.GetStatus()), "agent", a.GetAgent(),
		"conversation", conversationText(a.GetConversation()), "requester", a.GetRequester(), "function", a.GetToolkit()+"."+a.GetFunction(),
		"arguments", a.GetArgumentsJson(), "call", a.GetCallId(), "created", at(a.GetCreatedAt()), "decided by", a.GetDecidedBy(),
		"note", a.GetNote(), "outcome", a.GetOutcomeJson())
}
