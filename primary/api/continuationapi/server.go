package continuationapi

import (
	"context"
	"log/slog"
	"math"
	"sync/atomic"

	"google.golang.org/protobuf/types/known/timestamppb"

	continuationv1 "github.com/turncli/turncli/gen/turncli/continuation/v1"
	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/continuation"
	"github.com/turncli/turncli/primary/store"
)

// Server implements ContinuationService over the primary's outbox.
type Server struct {
	continuationv1.UnimplementedContinuationServiceServer
	outbox    *continuation.Outbox
	batchSize int
	log       *slog.Logger
}

// DefaultBatchSize is how many pending continuations a subscriber reads at once.
const DefaultBatchSize = 100

// NewServer returns the ContinuationService of outbox; batchSize <= 0 means DefaultBatchSize.
func NewServer(outbox *continuation.Outbox, batchSize int, log *slog.Logger) *Server {
	if batchSize <= 0 {
		batchSize = DefaultBatchSize
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{outbox: outbox, batchSize: batchSize, log: log}
}

var subscriberSeq atomic.Uint64

// Subscribe streams every pending continuation, oldest first, then each new one as it is
// committed, until the subscriber leaves or the outbox closes.
func (s *Server) Subscribe(_ *continuationv1.SubscribeRequest, stream continuationv1.ContinuationService_SubscribeServer) error {
	ctx := stream.Context()
	log := s.log.With("subscriber", subscriberSeq.Add(1))
	log.Info("continuation subscriber connected")
	defer log.Info("continuation subscriber left")
	var after int64 // this stream's cursor: the last id read
	for {
		select {
		case <-s.outbox.Closed():
			return continuation.ErrStopping
		default:
		}
		changed := s.outbox.Changed()
		batch, err := s.outbox.Pending(ctx, after, s.batchSize)
		if err != nil {
			return err
		}
		for _, c := range batch {
			after = c.ID
			attempt, pending, err := s.outbox.RecordDelivery(ctx, c.ID)
			if err != nil {
				return err
			}
			if !pending { // acknowledged since the read
				continue
			}
			if err := stream.Send(&continuationv1.SubscribeResponse{Continuation: toProto(c, attempt)}); err != nil {
				return err
			}
		}
		if len(batch) == s.batchSize {
			continue // there may be more already
		}
		select {
		case <-changed:
		case <-s.outbox.Closed():
			return continuation.ErrStopping
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Ack acknowledges a continuation; acknowledging twice is not an error.
func (s *Server) Ack(ctx context.Context, req *continuationv1.AckRequest) (*continuationv1.AckResponse, error) {
	if req.GetId() == 0 {
		return nil, fault.New(fault.InvalidArgument, "id is required")
	}
	if req.GetId() > math.MaxInt64 {
		return nil, continuation.ErrNoContinuation
	}
	if err := s.outbox.Ack(ctx, int64(req.GetId())); err != nil {
		return nil, err
	}
	return &continuationv1.AckResponse{}, nil
}

func toProto(c store.Continuation, attempt int) *continuationv1.Continuation {
	return &continuationv1.Continuation{
		Id:              uint64(c.ID),
		IdempotencyKey:  c.IdempotencyKey,
		Conversation:    &conversationv1.Conversation{Channel: c.Channel, Thread: c.Thread},
		Text:            c.Text,
		Post:            c.Post,
		Checkpoint:      c.Checkpoint,
		CreatedAt:       timestamppb.New(c.CreatedAt),
		DeliveryAttempt: uint32(min(attempt, math.MaxUint32)),
	}
}
