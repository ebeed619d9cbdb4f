package threadapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync/atomic"

	threadv1 "github.com/turncli/turncli/gen/turncli/thread/v1"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/surfaces/links"
	"github.com/turncli/turncli/primary/threadfeed"
)

// MaxAnswersBytes bounds a form's answers as a relay carries them.
const MaxAnswersBytes = 256 << 10

// Server implements ThreadEventService over a feed.
type Server struct {
	threadv1.UnimplementedThreadEventServiceServer
	feed  *threadfeed.Feed
	links *links.Minter
	log   *slog.Logger
}

// NewServer returns the ThreadEventService of feed, minting decision links with minter.
func NewServer(feed *threadfeed.Feed, minter *links.Minter, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{feed: feed, links: minter, log: log}
}

var subscriberSeq atomic.Uint64

// Subscribe implements ThreadEventService: an empty message once the request is accepted,
// then the feed after the cursor, until the subscriber leaves or the feed closes.
func (s *Server) Subscribe(req *threadv1.SubscribeRequest, stream threadv1.ThreadEventService_SubscribeServer) error {
	if len(req.GetCursor()) > threadfeed.MaxCursorBytes {
		return fault.Newf(fault.InvalidArgument, "cursor is %d bytes; at most %d are allowed", len(req.GetCursor()), threadfeed.MaxCursorBytes)
	}
	v := threadfeed.View{
		Channel: req.GetConversation().GetChannel(), Thread: req.GetConversation().GetThread(),
		ChunkBytes: clampInt(req.GetMaxChunkBytes()), CardBytes: clampInt(req.GetMaxCardBytes()),
	}
	if req.GetConversation() != nil && v.Channel == "" {
		return fault.New(fault.InvalidArgument, "conversation.channel is required when a conversation is given")
	}
	// The cursor and sizes are checked before the stream says it is open.
	if err := s.feed.Check(threadfeed.Cursor(req.GetCursor()), v); err != nil {
		return err
	}
	if err := stream.Send(&threadv1.SubscribeResponse{}); err != nil {
		return err
	}
	log := s.log.With("subscriber", subscriberSeq.Add(1))
	log.Info("thread feed subscriber connected")
	defer log.Info("thread feed subscriber left")
	return s.feed.Follow(stream.Context(), threadfeed.Cursor(req.GetCursor()), v, func(m threadfeed.Message) error {
		return stream.Send(messageToProto(m))
	})
}

// clampInt is n as an int, saturated so that a huge size is refused as too large.
func clampInt(n uint32) int { return int(min(n, 1<<30)) }

// DecideItem implements ThreadEventService.
func (s *Server) DecideItem(ctx context.Context, req *threadv1.DecideItemRequest) (*threadv1.DecideItemResponse, error) {
	id, err := identityOf(req.GetIdentity())
	if err != nil {
		return nil, err
	}
	if err := requireKey(req.GetItemKey()); err != nil {
		return nil, err
	}
	decision, ok := actionFromProto[req.GetDecision()]
	if !ok {
		return nil, fault.New(fault.InvalidArgument, "decision is required: approve, deny, comment, allow_once, allow_thread or allow_conversation")
	}
	it, err := s.feed.Decide(ctx, id, req.GetItemKey(), decision, req.GetText(),
		threadfeed.Seen{CardBytes: clampInt(req.GetCardBytes()), FullText: req.GetSawFullText()})
	if err != nil {
		return nil, err
	}
	s.log.Info("thread item decided", "item", it.Key, "decision", string(decision), "surface", id.Surface, "chat_user_id", id.ChatUserID)
	return &threadv1.DecideItemResponse{Item: itemToProto(it)}, nil
}

// SubmitForm implements ThreadEventService.
func (s *Server) SubmitForm(ctx context.Context, req *threadv1.SubmitFormRequest) (*threadv1.SubmitFormResponse, error) {
	id, revision, answers, err := formArgs(req.GetIdentity(), req.GetItemKey(), req.GetRevision(), req.GetAnswersJson())
	if err != nil {
		return nil, err
	}
	it, err := s.feed.SubmitForm(ctx, id, req.GetItemKey(), revision, answers)
	if err != nil {
		return nil, err
	}
	s.log.Info("thread form answered", "item", it.Key, "surface", id.Surface, "chat_user_id", id.ChatUserID)
	return &threadv1.SubmitFormResponse{Item: itemToProto(it)}, nil
}

// SaveFormDraft implements ThreadEventService.
func (s *Server) SaveFormDraft(ctx context.Context, req *threadv1.SaveFormDraftRequest) (*threadv1.SaveFormDraftResponse, error) {
	id, revision, answers, err := formArgs(req.GetIdentity(), req.GetItemKey(), req.GetRevision(), req.GetAnswersJson())
	if err != nil {
		return nil, err
	}
	it, err := s.feed.SaveFormDraft(ctx, id, req.GetItemKey(), revision, answers)
	if err != nil {
		return nil, err
	}
	return &threadv1.SaveFormDraftResponse{Item: itemToProto(it)}, nil
}

// CancelForm implements ThreadEventService.
func (s *Server) CancelForm(ctx context.Context, req *threadv1.CancelFormRequest) (*threadv1.CancelFormResponse, error) {
	id, err := identityOf(req.GetIdentity())
	if err != nil {
		return nil, err
	}
	if err := requireKey(req.GetItemKey()); err != nil {
		return nil, err
	}
	it, err := s.feed.CancelForm(ctx, id, req.GetItemKey())
	if err != nil {
		return nil, err
	}
	s.log.Info("thread form cancelled", "item", it.Key, "surface", id.Surface, "chat_user_id", id.ChatUserID)
	return &threadv1.CancelFormResponse{Item: itemToProto(it)}, nil
}

// identityOf is the chat account a relay names; both its fields are required (their form is
// fieldrule's, checked by the interceptor).
func identityOf(c *threadv1.ChatIdentity) (threadfeed.Identity, error) {
	if c.GetSurface() == "" || c.GetChatUserId() == "" {
		return threadfeed.Identity{}, fault.New(fault.InvalidArgument, "identity.surface and identity.chat_user_id are required")
	}
	return threadfeed.Identity{Surface: c.GetSurface(), ChatUserID: c.GetChatUserId()}, nil
}

// maxKeyBytes bounds an item key: a kind and a record id or a response id.
const maxKeyBytes = 128

func requireKey(key string) error {
	if key == "" || len(key) > maxKeyBytes {
		return fault.Newf(fault.InvalidArgument, "item_key must be 1..%d bytes", maxKeyBytes)
	}
	return nil
}

// formArgs checks what a form's relay carries.
func formArgs(c *threadv1.ChatIdentity, key string, revision uint64, answers string) (threadfeed.Identity, int64, json.RawMessage, error) {
	id, err := identityOf(c)
	if err != nil {
		return id, 0, nil, err
	}
	switch {
	case requireKey(key) != nil:
		return id, 0, nil, requireKey(key)
	case revision == 0 || revision > 1<<62:
		return id, 0, nil, fault.New(fault.InvalidArgument, "revision is required: the form's revision the answers were made on")
	case len(answers) > MaxAnswersBytes:
		return id, 0, nil, fault.Newf(fault.InvalidArgument, "answers_json is %d bytes; at most %d are allowed", len(answers), MaxAnswersBytes)
	}
	return id, int64(revision), json.RawMessage(answers), nil
}
