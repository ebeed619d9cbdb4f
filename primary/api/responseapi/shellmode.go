package responseapi

import (
	"context"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/shellmode"
	"github.com/turncli/turncli/primary/store"
)

// Preflight checks an agent's shell before a response opens in the minimal shell mode
// (shellmode.Preflight, the check operators' SetShellMode runs).
type Preflight interface {
	Check(ctx context.Context, t shellmode.Target) []shellmode.Problem
}

// ShellModes reads the shell mode stored for an agent in a conversation (store.ShellModes).
type ShellModes interface {
	ShellMode(ctx context.Context, channel, thread, agent string) (store.ShellModeSetting, error)
}

// shellMode is the mode a response opens with: the request's, else the one stored for the
// conversation and agent where it can apply, else standard. The response keeps it until it
// closes, whatever is stored later.
//
// A stored minimal mode was preflighted for one placement (the primary's own shells or one
// worker key) and for every toolkit. A response placed elsewhere, or whose toolkit selection
// leaves out the shell toolkit, opens standard rather than being refused: the runtime did not
// ask for the minimal mode, and standard is the default the contract gives a response that
// names no mode, so its turn goes on with the functions that finish inside a command (and
// every function natively). A runtime that names the minimal mode gets the preflight, and
// its refusal, instead.
func (s *Server) shellMode(ctx context.Context, req *responsev1.OpenResponseRequest) (string, error) {
	switch req.GetShellMode() {
	case responsev1.ShellMode_SHELL_MODE_MINIMAL:
		return response.ShellModeMinimal, nil
	case responsev1.ShellMode_SHELL_MODE_STANDARD:
		return response.ShellModeStandard, nil
	}
	channel := req.GetConversation().GetChannel()
	if channel == "" || req.GetAgentName() == "" {
		return response.ShellModeStandard, nil
	}
	setting, err := s.shellModes.ShellMode(ctx, channel, req.GetConversation().GetThread(), req.GetAgentName())
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		s.log.Error("read stored shell mode", "channel", channel, "agent", req.GetAgentName(), "err", err)
		return "", fault.New(fault.Unavailable, "the conversation's shell mode could not be read; try again")
	}
	if setting.Mode != store.ShellModeMinimal {
		return response.ShellModeStandard, nil
	}
	switch {
	case !setting.AppliesTo(req.GetWorkerKey()):
		s.log.Info("stored minimal shell mode not used: set for another placement", "channel", channel, "agent", req.GetAgentName(),
			"worker_key", req.GetWorkerKey(), "set_for_worker_key", setting.WorkerKey, "unplaced", setting.Unplaced)
		return response.ShellModeStandard, nil
	case !shellmode.SelectsShell(req.GetToolkits()):
		s.log.Info("stored minimal shell mode not used: the toolkit selection leaves out the shell toolkit", "channel", channel,
			"agent", req.GetAgentName(), "toolkits", req.GetToolkits())
		return response.ShellModeStandard, nil
	}
	return response.ShellModeMinimal, nil
}

// checkMinimal runs the minimal mode's preflight for a response about to open with spec, after
// the spec's own checks (the preflight creates the agent's workspace, so the agent name must be
// valid first). Any problem refuses the open: FAILED_PRECONDITION naming every problem and its
// fix, in the message for people and as PreconditionFailure violations for programs.
func (s *Server) checkMinimal(ctx context.Context, spec response.Spec) error {
	if err := spec.Validate(); err != nil {
		return engineErr(err)
	}
	problems := s.preflight.Check(ctx, shellmode.Target{
		Agent: spec.Agent, Channel: spec.Channel, Thread: spec.Thread, WorkerKey: spec.WorkerKey, Toolkits: spec.Toolkits,
	})
	if len(problems) == 0 {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	s.log.Info("minimal response refused", "agent", spec.Agent, "channel", spec.Channel, "thread", spec.Thread,
		"worker_key", spec.WorkerKey, "problems", len(problems))
	return shellmode.Refusal(spec.Agent, "no response was opened", problems)
}
