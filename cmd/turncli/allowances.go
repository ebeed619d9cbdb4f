package main

import (
	"context"
	"flag"
	"fmt"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/termtext"
)

var permissionScopes = map[string]operatorv1.PermissionScope{
	"thread": operatorv1.PermissionScope_PERMISSION_SCOPE_THREAD, "conversation": operatorv1.PermissionScope_PERMISSION_SCOPE_CONVERSATION,
}

var allowanceCommands = []command{
	listCommand("allowances", "list the permission allowances people granted for a thread or a conversation",
		[]string{"CONVERSATION", "TOOL", "SCOPE", "GRANTED BY", "GRANTED", "PROMPT"},
		func(a *operatorv1.PermissionAllowance) []string {
			return []string{conversationText(a.GetConversation()), a.GetToolName(), word(a.GetScope()),
				a.GetGrantedBy(), when(a.GetGrantedAt()), id(a.GetPromptId())}
		},
		func(fs *flag.FlagSet) fetchPage[*operatorv1.PermissionAllowance] {
			var conv conversationFlags
			conv.register(fs)
			return func(ctx context.Context, c *cli, size uint32, token string) ([]*operatorv1.PermissionAllowance, string, error) {
				filter, err := conv.filter()
				if err != nil {
					return nil, "", err
				}
				resp, err := c.api.ListPermissionAllowances(ctx, &operatorv1.ListPermissionAllowancesRequest{Conversation: filter, PageSize: size, PageToken: token})
				return resp.GetAllowances(), resp.GetNextPageToken(), err
			}
		}),
	{noun: "allowances", verb: "revoke", args: arity{"TOOL"}, summary: "revoke the allowance of TOOL in --channel (and --thread for scope thread)", setup: func(fs *flag.FlagSet) runner {
		var conv conversationFlags
		conv.register(fs)
		scope := newChoice(permissionScopes)
		fs.Var(scope, "scope", "the allowance's scope: "+scope.names()+" (required)")
		return online(func(ctx context.Context, c *cli, args []string) error {
			where, err := conv.required()
			if err != nil {
				return err
			}
			if scope.set == "" {
				return usageError("--scope is required")
			}
			ctx, cancel := c.call(ctx)
			defer cancel()
			if _, err := c.api.RevokePermissionAllowance(ctx, &operatorv1.RevokePermissionAllowanceRequest{Conversation: where, ToolName: args[0], Scope: scope.value}); err != nil {
				return err
			}
			if c.global.json {
				return c.emit(&operatorv1.RevokePermissionAllowanceResponse{})
			}
			_, err = fmt.Fprintf(c.stdout, "allowance of %s revoked\n", termtext.Inert(args[0]))
			return err
		})
	}},
}
