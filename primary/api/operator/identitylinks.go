package operator

import (
	"context"
	"log/slog"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/store"
)

// ListIdentityLinks implements OperatorService.
func (s *Server) ListIdentityLinks(ctx context.Context, req *operatorv1.ListIdentityLinksRequest) (*operatorv1.ListIdentityLinksResponse, error) {
	if _, err := caller(ctx, false, ""); err != nil {
		return nil, err
	}
	limit, err := pageSize(req.GetPageSize())
	if err != nil {
		return nil, err
	}
	pg := page("identity_links", req.GetSurface(), req.GetPerson())
	at, key, err := pg.timeKey(req.GetPageToken(), 2)
	if err != nil {
		return nil, err
	}
	f := store.IdentityLinkFilter{Surface: req.GetSurface(), Person: req.GetPerson(), Limit: limit}
	if key != nil {
		f.After = store.IdentityLinkPosition{CreatedAt: at, Surface: key[0], ChatUserID: key[1]}
	}
	list, err := s.identityLinks.ListIdentityLinks(ctx, f)
	if err != nil {
		s.logger.Error("identity links not listed", "err", err)
		return nil, err
	}
	out := &operatorv1.ListIdentityLinksResponse{Links: make([]*operatorv1.IdentityLink, 0, len(list))}
	for _, l := range list {
		out.Links = append(out.Links, identityLinkToProto(l))
	}
	if len(list) == limit {
		last := list[len(list)-1]
		out.NextPageToken = pg.nextTime(last.CreatedAt, last.Surface, last.ChatUserID)
	}
	return out, nil
}

// LinkIdentity implements OperatorService.
func (s *Server) LinkIdentity(ctx context.Context, req *operatorv1.LinkIdentityRequest) (*operatorv1.LinkIdentityResponse, error) {
	op, err := caller(ctx, true, "link a chat account")
	if err != nil {
		return nil, err
	}
	if err := requireIdentity(req.GetSurface(), req.GetChatUserId()); err != nil {
		return nil, err
	}
	if req.GetPerson() == "" {
		return nil, fault.New(fault.InvalidArgument, "person is required")
	}
	l := store.NewIdentityLink{Surface: req.GetSurface(), ChatUserID: req.GetChatUserId(), Person: req.GetPerson()}
	link, replaced, err := s.identityLinks.LinkIdentity(ctx, l, op.Name)
	if err != nil {
		return nil, err
	}
	s.logger.Info("chat account linked", slog.String("operator", op.Name), slog.String("surface", link.Surface),
		slog.String("chat_user_id", link.ChatUserID), slog.String("person", link.Person), slog.Bool("replaced", replaced))
	return &operatorv1.LinkIdentityResponse{Link: identityLinkToProto(link), Replaced: replaced}, nil
}

// UnlinkIdentity implements OperatorService.
func (s *Server) UnlinkIdentity(ctx context.Context, req *operatorv1.UnlinkIdentityRequest) (*operatorv1.UnlinkIdentityResponse, error) {
	op, err := caller(ctx, true, "unlink a chat account")
	if err != nil {
		return nil, err
	}
	if err := requireIdentity(req.GetSurface(), req.GetChatUserId()); err != nil {
		return nil, err
	}
	if err := s.identityLinks.UnlinkIdentity(ctx, req.GetSurface(), req.GetChatUserId(), op.Name); err != nil {
		return nil, err
	}
	s.logger.Info("chat account unlinked", slog.String("operator", op.Name), slog.String("surface", req.GetSurface()),
		slog.String("chat_user_id", req.GetChatUserId()))
	return &operatorv1.UnlinkIdentityResponse{}, nil
}

// requireIdentity refuses a request that does not name a chat account; the fields' rules are
// the request interceptor's and the store's (fieldrule).
func requireIdentity(surface, chatUserID string) error {
	switch {
	case surface == "":
		return fault.New(fault.InvalidArgument, "surface is required")
	case chatUserID == "":
		return fault.New(fault.InvalidArgument, "chat_user_id is required")
	}
	return nil
}

func identityLinkToProto(l store.IdentityLink) *operatorv1.IdentityLink {
	return &operatorv1.IdentityLink{Surface: l.Surface, ChatUserId: l.ChatUserID, Person: l.Person,
		CreatedBy: l.CreatedBy, CreatedAt: timestamp(l.CreatedAt)}
}
