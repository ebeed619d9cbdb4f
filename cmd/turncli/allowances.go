package main

import (
	"context"
	"flag"
	"fmt"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
)

var permissionScopes = map[string]operatorv1.PermissionScope{
	"thread": operatorv1.PermissionScope_PERMISSION_SCOPE_THREAD, "conversation": operatorv1.PermissionScope_PERMISSION_SCOPE_CONVERSATION,
}

var allowanceCommands = []command{
	{noun: "allowances", verb: "ls", summary: "list the permission allowances people granted for a thread or a conversation", setup: func(fs *flag.FlagSet) runner {
		var conv conversationFlags
		conv.register(fs)
		var p page
		p.register(fs)
		return online(func(ctx context.Context, c *cli, _ []string) error {
			filter, err := conv.filter()
			if err != nil {
				return err
			}
			list, err := collect(ctx, p, func(ctx context.Context, size uint32, token string) ([]*operatorv1.PermissionAllowance, string, error) {
				ctx, cancel := c.call(ctx)
				defer cancel()
				resp, err := c.api.ListPermissionAllowances(ctx, &operatorv1.ListPermissionAllowancesRequest{Conversation: filter, PageSize: size, PageToken: token})
				return resp.GetAllowances(), resp.GetNextPageToken(), err
			})
			if err != nil {
				return err
			}
			if c.global.json {
				return emitAll(c, list)
			}
			rows := make([][]string, 0, len(list))
			for _, a := range list {
				rows = append(rows, []string{conversationText(a.GetConversation()), a.GetToolName(), enumName(a.GetScope().String(), "PERMISSION_SCOPE_"),
					a.GetGrantedBy(), when(a.GetGrantedAt()), id(a.GetPromptId())})
			}
			return c.table([]string{"CONVERSATION", "TOOL", "SCOPE", "GRANTED BY", "GRANTED", "PROMPT"}, rows)
		})
	}},
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
				return fmt.Errorf("%w: --scope is required", errUsage)
			}
			ctx, cancel := c.call(ctx)
			defer cancel()
			if _, err := c.api.RevokePermissionAllowance(ctx, &operatorv1.RevokePermissionAllowanceRequest{Conversation: where, ToolName: args[0], Scope: scope.value}); err != nil {
				return err
			}
			if c.global.json {
				return c.emit(&operatorv1.RevokePermissionAllowanceResponse{})
			}
			_, err = fmt.Fprintf(c.stdout, "allowance of %s revoked\n", inert(args[0]))
			return err
		})
	}},
}
