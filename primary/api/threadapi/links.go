package threadapi

import (
	"context"

	"google.golang.org/protobuf/types/known/timestamppb"

	threadv1 "github.com/turncli/turncli/gen/turncli/thread/v1"
)

// MintDecisionLinks implements ThreadEventService.
func (s *Server) MintDecisionLinks(ctx context.Context, req *threadv1.MintDecisionLinksRequest) (*threadv1.MintDecisionLinksResponse, error) {
	id, err := identityOf(req.GetIdentity())
	if err != nil {
		return nil, err
	}
	if err := requireKey(req.GetItemKey()); err != nil {
		return nil, err
	}
	minted, err := s.links.Mint(ctx, id, req.GetItemKey())
	if err != nil {
		return nil, err
	}
	out := &threadv1.MintDecisionLinksResponse{}
	for _, l := range minted {
		out.Links = append(out.Links, &threadv1.DecisionLink{Decision: actionToProto[l.Decision], Url: l.URL, ExpiresAt: timestamppb.New(l.ExpiresAt)})
	}
	s.log.Info("decision links minted", "item", req.GetItemKey(), "links", len(out.Links), "surface", id.Surface, "chat_user_id", id.ChatUserID)
	return out, nil
}
