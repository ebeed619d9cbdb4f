package operator

import (
	"context"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/store"
	"log/slog"
)

// Allowances keeps the permission allow-lists (the store does).
type Allowances interface {
	ListPermissionAllowances(ctx context.Context, f store.AllowanceFilter) ([]store.PermissionAllowance, error)
	RevokePermissionAllowance(ctx context.Context, a store.PermissionAllowance, actor string) error
}

var scopeToProto = map[string]operatorv1.PermissionScope{
	"thread":       operatorv1.PermissionScope_PERMISSION_SCOPE_THREAD,
	"conversation": operatorv1.PermissionScope_PERMISSION_SCOPE_CONVERSATION,
}

var scopeFromProto = map[operatorv1.PermissionScope]string{
	operatorv1.PermissionScope_PERMISSION_SCOPE_THREAD:       "thread",
	operatorv1.PermissionScope_PERMISSION_SCOPE_CONVERSATION: "conversation",
}

// ListPermissionAllowances implements OperatorService.
func (s *Server) ListPermissionAllowances(ctx context.Context, req *operatorv1.ListPermissionAllowancesRequest) (*operatorv1.ListPermissionAllowancesResponse, error) {
	if _, err := caller(ctx, false, ""); err != nil {
		return nil, err
	}
	channel, thread, err := conversationFilter(req.GetConversation())
	if err != nil {
		return nil, err
	}
	limit, err := pageSize(req.GetPageSize())
	if err != nil {
		return nil, err
	}
	pg := page("permission_allowances", channel, thread)
	at, key, err := pg.timeKey(req.GetPageToken(), 4)
	if err != nil {
		return nil, err
	}
	f := store.AllowanceFilter{Channel: channel, Thread: thread, Limit: limit}
	if key != nil {
		f.After = store.AllowancePosition{GrantedAt: at, Channel: key[0], Thread: key[1], ToolName: key[2], Scope: key[3]}
	}
	list, err := s.allowances.ListPermissionAllowances(ctx, f)
	if err != nil {
		s.logger.Error("permission allowances not listed", "err", err)
		return nil, err
	}
	out := &operatorv1.ListPermissionAllowancesResponse{Allowances: make([]*operatorv1.PermissionAllowance, 0, len(list))}
	for _, a := range list {
		out.Allowances = append(out.Allowances, &operatorv1.PermissionAllowance{
			Conversation: conversationToProto(a.Channel, a.Thread), ToolName: a.ToolName, Scope: scopeToProto[a.Scope],
			GrantedBy: a.GrantedBy, GrantedAt: timestamp(a.GrantedAt), PromptId: uint64(a.PromptID),
		})
	}
	if len(list) == limit {
		last := list[len(list)-1]
		out.NextPageToken = pg.nextTime(last.GrantedAt, last.Channel, last.Thread, last.ToolName, last.Scope)
	}
	return out, nil
}

// RevokePermissionAllowance implements OperatorService.
func (s *Server) RevokePermissionAllowance(ctx context.Context, req *operatorv1.RevokePermissionAllowanceRequest) (*operatorv1.RevokePermissionAllowanceResponse, error) {
	op, err := caller(ctx, true, "revoke a permission allowance")
	if err != nil {
		return nil, err
	}
	scope, ok := scopeFromProto[req.GetScope()]
	switch {
	case req.GetConversation().GetChannel() == "":
		return nil, fault.New(fault.InvalidArgument, "conversation.channel is required")
	case req.GetToolName() == "":
		return nil, fault.New(fault.InvalidArgument, "tool_name is required")
	case !ok:
		return nil, fault.New(fault.InvalidArgument, "scope must be PERMISSION_SCOPE_THREAD or PERMISSION_SCOPE_CONVERSATION")
	}
	a := store.PermissionAllowance{Channel: req.GetConversation().GetChannel(), Thread: req.GetConversation().GetThread(),
		ToolName: req.GetToolName(), Scope: scope}
	if err := s.allowances.RevokePermissionAllowance(ctx, a, op.Name); err != nil {
		return nil, err
	}
	s.logger.Info("permission allowance revoked", slog.String("operator", op.Name), slog.String("tool", a.ToolName),
		slog.String("scope", scope), slog.String("channel", a.Channel))
	return &operatorv1.RevokePermissionAllowanceResponse{}, nil
}
