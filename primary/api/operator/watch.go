package operator

import (
	"encoding/json"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/events"
)

// errStopping ends the watches of a closed server.
var errStopping = fault.New(fault.Unavailable, "the primary is stopping; watch again later")

// WatchEvents implements OperatorService. The subscription is in place before the first,
// empty, message is sent, so a client that lists after receiving it misses no change. The
// watch ends when the client leaves or Close is called; a watcher that falls behind gets the
// bus's gap event in place of what it lost, and is never waited for by publishers.
func (s *Server) WatchEvents(_ *operatorv1.WatchEventsRequest, stream operatorv1.OperatorService_WatchEventsServer) error {
	ctx := stream.Context()
	op, err := caller(ctx, false, "")
	if err != nil {
		return err
	}
	select {
	case <-s.closed:
		return errStopping
	default:
	}
	feed, stop := s.events.Subscribe(events.DefaultBuffer)
	defer stop()
	log := s.logger.With("operator", op.Name)
	log.Info("event watcher connected")
	defer log.Info("event watcher left")
	if err := stream.Send(&operatorv1.WatchEventsResponse{}); err != nil {
		return err
	}
	for {
		select {
		case ev := <-feed: // open until stop: only this watch ends its subscription
			if err := stream.Send(&operatorv1.WatchEventsResponse{Event: s.eventToProto(ev)}); err != nil {
				return err
			}
		case <-s.closed:
			return errStopping
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// eventToProto converts an event; data that cannot be encoded is sent as null (and logged),
// so one bad publisher cannot end every watch.
func (s *Server) eventToProto(ev events.Event) *operatorv1.Event {
	data, err := json.Marshal(ev.Data)
	if err != nil {
		s.logger.Error("event data not encodable", "kind", ev.Kind, "subject", ev.Subject, "seq", ev.Seq, "err", err)
		data = []byte("null")
	}
	return &operatorv1.Event{Seq: ev.Seq, At: timestamp(ev.At), Kind: ev.Kind, Subject: ev.Subject, DataJson: string(data)}
}
