package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/termtext"
)

var approvalStatuses = map[string]operatorv1.ApprovalStatus{
	"pending": operatorv1.ApprovalStatus_APPROVAL_STATUS_PENDING, "executing": operatorv1.ApprovalStatus_APPROVAL_STATUS_EXECUTING,
	"consumed": operatorv1.ApprovalStatus_APPROVAL_STATUS_CONSUMED, "failed": operatorv1.ApprovalStatus_APPROVAL_STATUS_FAILED,
	"denied": operatorv1.ApprovalStatus_APPROVAL_STATUS_DENIED,
}

var approvalCommands = []command{
	listCommand("approvals", "list durable approvals of background jobs and agents, newest first",
		[]string{"ID", "STATUS", "KIND", "AGENT", "CONVERSATION", "REQUESTER", "CREATED", "COMMAND"},
		func(a *operatorv1.Approval) []string {
			return []string{id(a.GetId()), word(a.GetStatus()), word(a.GetKind()),
				a.GetAgent(), conversationText(a.GetConversation()), a.GetAuthor(), when(a.GetCreatedAt()), a.GetCommand()}
		},
		func(fs *flag.FlagSet) fetchPage[*operatorv1.Approval] {
			status := newChoice(approvalStatuses)
			fs.Var(status, "status", "only approvals in this state: "+status.names())
			var conv conversationFlags
			conv.register(fs)
			return func(ctx context.Context, c *cli, size uint32, token string) ([]*operatorv1.Approval, string, error) {
				filter, err := conv.filter()
				if err != nil {
					return nil, "", err
				}
				resp, err := c.api.ListApprovals(ctx, &operatorv1.ListApprovalsRequest{Status: status.value, Conversation: filter, PageSize: size, PageToken: token})
				return resp.GetApprovals(), resp.GetNextPageToken(), err
			}
		}),
	recordCommand("approvals", "show", "approval id", "show one approval with its comments", showApproval,
		noFlags(func(ctx context.Context, c *cli, n uint64) (*operatorv1.Approval, error) {
			resp, err := c.api.GetApproval(ctx, &operatorv1.GetApprovalRequest{ApprovalId: n})
			return resp.GetApproval(), err
		})),
	decideApprovalCommand(operatorv1.Decision_DECISION_APPROVE, "approve a pending approval: its job starts (admins)"),
	decideApprovalCommand(operatorv1.Decision_DECISION_DENY, "deny a pending approval, with an optional note (-m)"),
	decideApprovalCommand(operatorv1.Decision_DECISION_COMMENT, "comment on a pending approval (-m, required); it stays pending"),
}

func decideApprovalCommand(decision operatorv1.Decision, summary string) command {
	return recordCommand("approvals", decisionWords[decision], "approval id", summary, showApproval,
		func(fs *flag.FlagSet) func(context.Context, *cli, uint64) (*operatorv1.Approval, error) {
			text := fs.String("m", "", "a note or comment, written to the audit log")
			return func(ctx context.Context, c *cli, n uint64) (*operatorv1.Approval, error) {
				if decision == operatorv1.Decision_DECISION_COMMENT && *text == "" {
					return nil, usageError("a comment needs -m TEXT")
				}
				resp, err := c.api.DecideApproval(ctx, &operatorv1.DecideApprovalRequest{ApprovalId: n, Decision: decision, Text: *text})
				return resp.GetApproval(), err
			}
		})
}

func showApproval(c *cli, a *operatorv1.Approval) error {
	if c.global.json {
		return c.emit(a)
	}
	job := ""
	if a.GetJobId() != 0 {
		job = id(a.GetJobId())
	}
	if err := c.fields("id", id(a.GetId()), "status", word(a.GetStatus()),
		"kind", word(a.GetKind()), "agent", a.GetAgent(), "conversation", conversationText(a.GetConversation()),
		"requester", a.GetAuthor(), "worker key", a.GetLocation().GetWorkerKey(), "label", a.GetLabel(), "command", a.GetCommand(),
		"workdir", a.GetWorkdir(), "created", at(a.GetCreatedAt()), "decided by", a.GetDecidedBy(), "note", a.GetNote(), "job", job); err != nil {
		return err
	}
	for _, cm := range a.GetComments() {
		fmt.Fprintf(c.stdout, "comment by %s at %s: %s\n", termtext.Inert(cm.GetActor()), at(cm.GetAt()), termtext.Inert(cm.GetText()))
	}
	return nil
}

func id(n uint64) string { return strconv.FormatUint(n, 10) }
