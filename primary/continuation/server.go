package continuation

import (
	"context"
	"errors"
	"math"
	"sync/atomic"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	continuationv1 "github.com/turncli/turncli/gen/turncli/continuation/v1"
	"github.com/turncli/turncli/primary/store"
)

var subscriberSeq atomic.Uint64

var errStopping = status.Error(codes.Unavailable, "the primary is stopping; subscribe again")

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
			return s.toStatus(ctx, err)
		}
		for _, c := range batch {
			after = c.ID
			attempt, pending, err := s.cfg.Store.RecordContinuationDelivery(ctx, c.ID)
			if err != nil {
				return s.toStatus(ctx, err)
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
			return status.FromContextError(ctx.Err()).Err()
		}
	}
}

// Ack acknowledges a continuation; acknowledging twice is not an error.
func (s *Service) Ack(ctx context.Context, req *continuationv1.AckRequest) (*continuationv1.AckResponse, error) {
	if req.GetId() == 0 {
		return nil, status.Error(codes.InvalidArgument, "id is required")
	}
	if req.GetId() > math.MaxInt64 {
		return nil, status.Error(codes.NotFound, "no such continuation")
	}
	if err := s.cfg.Store.AckContinuation(ctx, int64(req.GetId())); err != nil {
		return nil, s.toStatus(ctx, err)
	}
	s.cfg.Logger.Debug("continuation acknowledged", "continuation_id", req.GetId())
	return &continuationv1.AckResponse{}, nil
}

// toStatus chooses the status code of a store error, once, here.
func (s *Service) toStatus(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return status.FromContextError(ctx.Err()).Err()
	case errors.Is(err, store.ErrNotFound):
		return status.Error(codes.NotFound, "no such continuation")
	case errors.Is(err, store.ErrInvalid):
		return status.Error(codes.InvalidArgument, err.Error())
	}
	s.cfg.Logger.Error("continuation store failed", "err", err)
	return status.Error(codes.Unavailable, "the continuation outbox is unavailable; retry")
}

func toProto(c store.Continuation, attempt int) *continuationv1.Continuation {
	return &continuationv1.Continuation{
		Id:              uint64(c.ID),
		IdempotencyKey:  c.IdempotencyKey,
		Conversation:    &continuationv1.Conversation{Channel: c.Channel, Thread: c.Thread},
		Text:            c.Text,
		Post:            c.Post,
		Checkpoint:      c.Checkpoint,
		CreatedAt:       timestamppb.New(c.CreatedAt),
		DeliveryAttempt: uint32(min(attempt, math.MaxUint32)),
	}
}
