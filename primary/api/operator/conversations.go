package operator

import (
	"context"

	"google.golang.org/protobuf/types/known/timestamppb"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
)

// ListConversations implements OperatorService.
func (s *Server) ListConversations(ctx context.Context, req *operatorv1.ListConversationsRequest) (*operatorv1.ListConversationsResponse, error) {
	if _, err := caller(ctx, false, ""); err != nil {
		return nil, err
	}
	limit, err := pageSize(req.GetPageSize())
	if err != nil {
		return nil, err
	}
	list, err := s.store.ListConversations(ctx, limit)
	if err != nil {
		return nil, err
	}
	resp := &operatorv1.ListConversationsResponse{Conversations: make([]*operatorv1.ConversationSummary, 0, len(list))}
	for _, c := range list {
		resp.Conversations = append(resp.Conversations, &operatorv1.ConversationSummary{
			Conversation:   &conversationv1.Conversation{Channel: c.Channel, Thread: c.Thread},
			Mode:           settingToProto(c.Mode),
			LastActivityAt: timestamppb.New(c.LastActivity),
		})
	}
	return resp, nil
}
