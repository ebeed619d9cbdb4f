package continuation

import (
	"context"
	"errors"
	"google.golang.org/protobuf/types/known/timestamppb"
	"math"
	"sync/atomic"

	continuationv1 "github.com/turncli/turncli/gen/turncli/continuation/v1"
	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/store"
)

var subscriberSeq atomic.Uint64

var (
	errStopping       = fault.New(fault.Unavailable, "the primary is stopping; subscribe again")
	errNoContinuation = fault.New(fault.NotFound, "no such continuation")
)

// Subscribe streams every pending continuation, oldest first, then each new one as it is
// committed, until the subscriber leaves or the service closes.
func (s *Service) Subscribe(_ *continuationv1.SubscribeRequest, stream continuationv1.ContinuationService_SubscribeServer) error {
	ctx := stream.Context()
	log := s.cfg.Logger.With("subscriber", subscriberSeq.Add(1))
	log.Info("continuation subscriber connected")
	defer log.Info("continuation subscriber left")
	var after int64 // this stream's cursor: the last id read
	for {
		select {
		case <-s.closed:
			return errStopping
		default:
		}
		changed := s.changedSignal()
		batch, err := s.cfg.Store.PendingContinuations(ctx, after, s.cfg.BatchSize)
		if err != nil {
			return s.storeErr(ctx, err)
		}
		for _, c := range batch {
			after = c.ID
			attempt, pending, err := s.cfg.Store.RecordContinuationDelivery(ctx, c.ID)
			if err != nil {
				return s.storeErr(ctx, err)
			}
			if !pending { // acknowledged since the read
				continue
			}
			if err := stream.Send(&continuationv1.SubscribeResponse{Continuation: toProto(c, attempt)}); err != nil {
				return err
			}
		}
		if len(batch) == s.cfg.BatchSize {
			continue // there may be more already
		}
		select {
		case <-changed:
		case <-s.closed:
			return errStopping
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Ack acknowledges a continuation; acknowledging twice is not an error.
func (s *Service) Ack(ctx context.Context, req *continuationv1.AckRequest) (*continuationv1.AckResponse, error) {
	if req.GetId() == 0 {
		return nil, fault.New(fault.InvalidArgument, "id is required")
	}
	if req.GetId() > math.MaxInt64 {
		return nil, errNoContinuation
	}
	if err := s.cfg.Store.AckContinuation(ctx, int64(req.GetId())); err != nil {
		return nil, s.storeErr(ctx, err)
	}
	s.cfg.Logger.Debug("continuation acknowledged", "continuation_id", req.GetId())
	return &continuationv1.AckResponse{}, nil
}

// storeErr is a store error as the runtime reads it: the caller's own end, an unknown id, and
// a refused argument keep their kinds; any other failure of the outbox is logged and is
// UNAVAILABLE, since the runtime's retry is the remedy.
func (s *Service) storeErr(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, store.ErrNotFound):
		return errNoContinuation
	case errors.Is(err, store.ErrInvalid):
		return err
	}
	s.cfg.Logger.Error("continuation store failed", "err", err)
	return fault.New(fault.Unavailable, "the continuation outbox is unavailable; retry")
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
