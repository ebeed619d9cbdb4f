package responseapi

import (
	"context"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/fault"
)

// ThreadStopper ends what waits on a thread's people when the thread stops (the interaction
// toolkit's pending questions) and says how many requests it cancelled.
type ThreadStopper func(ctx context.Context, channel, thread string) (int, error)

// StopThread implements ResponseService.
func (s *Server) StopThread(ctx context.Context, req *responsev1.StopThreadRequest) (*responsev1.StopThreadResponse, error) {
	c := req.GetConversation()
	if c.GetChannel() == "" || c.GetThread() == "" {
		return nil, fault.New(fault.InvalidArgument, "conversation.channel and conversation.thread are required")
	}
	n, err := s.stopThread(ctx, c.GetChannel(), c.GetThread())
	if err != nil {
		id := fault.Hide(ctx, s.log, err, "stop thread", "channel", c.GetChannel())
		return nil, fault.Hidden(id, "the thread's pending requests could not be cancelled; try again")
	}
	s.log.Info("thread stopped", "channel", c.GetChannel(), "thread", c.GetThread(), "cancelled_questions", n)
	return &responsev1.StopThreadResponse{CancelledQuestions: uint32(n)}, nil
}
