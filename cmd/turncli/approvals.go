package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"

	"google.golang.org/protobuf/proto"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
)

// runner is what a command's setup returns.
type runner = func(ctx context.Context, c *cli, args []string) error

// online wraps a command's body: it connects first and closes after.
func online(body runner) runner {
	return func(ctx context.Context, c *cli, args []string) error {
		if err := c.connect(); err != nil {
			return err
		}
		defer c.close()
		return body(ctx, c, args)
	}
}

var approvalStatuses = map[string]operatorv1.ApprovalStatus{
	"pending": operatorv1.ApprovalStatus_APPROVAL_STATUS_PENDING, "executing": operatorv1.ApprovalStatus_APPROVAL_STATUS_EXECUTING,
	"consumed": operatorv1.ApprovalStatus_APPROVAL_STATUS_CONSUMED, "failed": operatorv1.ApprovalStatus_APPROVAL_STATUS_FAILED,
	"denied": operatorv1.ApprovalStatus_APPROVAL_STATUS_DENIED,
}

var approvalCommands = []command{
	{noun: "approvals", verb: "ls", summary: "list durable approvals of background jobs and agents, newest first", setup: func(fs *flag.FlagSet) runner {
		status := newChoice(approvalStatuses)
		fs.Var(status, "status", "only approvals in this state: "+status.names())
		var conv conversationFlags
		conv.register(fs)
		var p page
		p.register(fs)
		return online(func(ctx context.Context, c *cli, _ []string) error {
			filter, err := conv.filter()
			if err != nil {
				return err
			}
			list, err := collect(ctx, p, func(ctx context.Context, size uint32, token string) ([]*operatorv1.Approval, string, error) {
				ctx, cancel := c.call(ctx)
				defer cancel()
				resp, err := c.api.ListApprovals(ctx, &operatorv1.ListApprovalsRequest{Status: status.value, Conversation: filter, PageSize: size, PageToken: token})
				return resp.GetApprovals(), resp.GetNextPageToken(), err
			})
			if err != nil {
				return err
			}
			if c.global.json {
				return emitAll(c, list)
			}
			rows := make([][]string, 0, len(list))
			for _, a := range list {
				rows = append(rows, []string{id(a.GetId()), enumName(a.GetStatus().String(), "APPROVAL_STATUS_"), enumName(a.GetKind().String(), "JOB_KIND_"),
					a.GetAgent(), conversationText(a.GetConversation()), a.GetAuthor(), when(a.GetCreatedAt()), a.GetCommand()})
			}
			return c.table([]string{"ID", "STATUS", "KIND", "AGENT", "CONVERSATION", "REQUESTER", "CREATED", "COMMAND"}, rows)
		})
	}},
	{noun: "approvals", verb: "show", args: arity{"ID"}, summary: "show one approval with its comments", setup: func(fs *flag.FlagSet) runner {
		return online(func(ctx context.Context, c *cli, args []string) error {
			n, err := parseID("approval id", args[0])
			if err != nil {
				return err
			}
			ctx, cancel := c.call(ctx)
			defer cancel()
			resp, err := c.api.GetApproval(ctx, &operatorv1.GetApprovalRequest{ApprovalId: n})
			if err != nil {
				return err
			}
			return showApproval(c, resp.GetApproval())
		})
	}},
	decideApprovalCommand("approve", operatorv1.Decision_DECISION_APPROVE, "approve a pending approval: its job starts (admins)"),
	decideApprovalCommand("deny", operatorv1.Decision_DECISION_DENY, "deny a pending approval, with an optional note (-m)"),
	decideApprovalCommand("comment", operatorv1.Decision_DECISION_COMMENT, "comment on a pending approval (-m, required); it stays pending"),
}

func decideApprovalCommand(verb string, decision operatorv1.Decision, summary string) command {
	return command{noun: "approvals", verb: verb, args: arity{"ID"}, summary: summary, setup: func(fs *flag.FlagSet) runner {
		text := fs.String("m", "", "a note or comment, written to the audit log")
		return online(func(ctx context.Context, c *cli, args []string) error {
			n, err := parseID("approval id", args[0])
			if err != nil {
				return err
			}
			if decision == operatorv1.Decision_DECISION_COMMENT && *text == "" {
				return fmt.Errorf("%w: a comment needs -m TEXT", errUsage)
			}
			ctx, cancel := c.call(ctx)
			defer cancel()
			resp, err := c.api.DecideApproval(ctx, &operatorv1.DecideApprovalRequest{ApprovalId: n, Decision: decision, Text: *text})
			if err != nil {
				return err
			}
			return showApproval(c, resp.GetApproval())
		})
	}}
}

func showApproval(c *cli, a *operatorv1.Approval) error {
	if c.global.json {
		return c.emit(a)
	}
	job := ""
	if a.GetJobId() != 0 {
		job = id(a.GetJobId())
	}
	if err := c.fields("id", id(a.GetId()), "status", enumName(a.GetStatus().String(), "APPROVAL_STATUS_"),
		"kind", enumName(a.GetKind().String(), "JOB_KIND_"), "agent", a.GetAgent(), "conversation", conversationText(a.GetConversation()),
		"requester", a.GetAuthor(), "worker key", a.GetLocation().GetWorkerKey(), "label", a.GetLabel(), "command", a.GetCommand(),
		"workdir", a.GetWorkdir(), "created", at(a.GetCreatedAt()), "decided by", a.GetDecidedBy(), "note", a.GetNote(), "job", job); err != nil {
		return err
	}
	for _, cm := range a.GetComments() {
		fmt.Fprintf(c.stdout, "comment by %s at %s: %s\n", inert(cm.GetActor()), at(cm.GetAt()), inert(cm.GetText()))
	}
	return nil
}

func id(n uint64) string { return strconv.FormatUint(n, 10) }

// emitAll prints each record as a line of protojson.
func emitAll[M proto.Message](c *cli, list []M) error {
	for _, m := range list {
		if err := c.emit(m); err != nil {
			return err
		}
	}
	return nil
}
