package responseapi

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/store"
)

// ShellModes reads the shell mode stored for an agent in a conversation (store.ShellModes).
type ShellModes interface {
	ShellMode(ctx context.Context, channel, thread, agent string) (store.ShellModeSetting, error)
}

// WithShellModes sets where OpenResponse finds the mode of a request that names none; without
// it such a response is standard.
func (s *Server) WithShellModes(m ShellModes) *Server {
	s.shellModes = m
	return s
}

// shellMode is the mode a response opens with: the request's, else the one stored for the
// conversation and agent, else standard. The response keeps it until it closes, whatever is
// stored later.
func (s *Server) shellMode(ctx context.Context, req *responsev1.OpenResponseRequest) (string, error) {
	switch req.GetShellMode() {
	case responsev1.ShellMode_SHELL_MODE_MINIMAL:
		return response.ShellModeMinimal, nil
	case responsev1.ShellMode_SHELL_MODE_STANDARD:
		return response.ShellModeStandard, nil
	}
	channel := req.GetConversation().GetChannel()
	if s.shellModes == nil || channel == "" || req.GetAgentName() == "" {
		return response.ShellModeStandard, nil
	}
	setting, err := s.shellModes.ShellMode(ctx, channel, req.GetConversation().GetThread(), req.GetAgentName())
	if err != nil {
		if ctx.Err() != nil {
			return "", status.FromContextError(ctx.Err()).Err()
		}
		s.log.Error("read stored shell mode", "channel", channel, "agent", req.GetAgentName(), "err", err)
		return "", status.Error(codes.Unavailable, "the conversation's shell mode could not be read; try again")
	}
	if setting.Mode == store.ShellModeMinimal {
		return response.ShellModeMinimal, nil
	}
	return response.ShellModeStandard, nil
}
