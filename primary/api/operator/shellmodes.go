package operator

import (
	"context"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/shellmode"
	"github.com/turncli/turncli/primary/store"
)

// ShellPreflight checks an agent's shell before the minimal shell mode is stored
// (shellmode.Preflight).
type ShellPreflight interface {
	Check(ctx context.Context, t shellmode.Target) []shellmode.Problem
}

// shellModes is what the shell-mode methods use: the store to read and reset, and the rule
// that sets.
type shellModes struct {
	store store.ShellModes
	modes *shellmode.Modes
}

// shellModeKey checks the conversation and agent a request names, with the rules of a response.
func shellModeKey(c *conversationv1.Conversation, agent, workerKey string) error {
	if c.GetChannel() == "" {
		return errNoChannel
	}
	spec := response.Spec{Agent: agent, Channel: c.GetChannel(), Thread: c.GetThread(), WorkerKey: workerKey}
	if err := spec.Validate(); err != nil {
		return err // InvalidArgument, saying which rule
	}
	return nil
}

// GetShellMode implements OperatorService.
func (s *Server) GetShellMode(ctx context.Context, req *operatorv1.GetShellModeRequest) (*operatorv1.GetShellModeResponse, error) {
	if _, err := caller(ctx, false, ""); err != nil {
		return nil, err
	}
	c := req.GetConversation()
	if err := shellModeKey(c, req.GetAgentName(), ""); err != nil {
		return nil, err
	}
	setting, err := s.shellModes.store.ShellMode(ctx, c.GetChannel(), c.GetThread(), req.GetAgentName())
	if err != nil {
		return nil, err
	}
	return &operatorv1.GetShellModeResponse{Setting: shellModeSettingToProto(setting)}, nil
}

// SetShellMode implements OperatorService, with shellmode.Modes' rule: the minimal mode is
// stored only when its preflight finds no problem; a standard mode is always stored.
func (s *Server) SetShellMode(ctx context.Context, req *operatorv1.SetShellModeRequest) (*operatorv1.SetShellModeResponse, error) {
	op, err := caller(ctx, true, "set a shell mode")
	if err != nil {
		return nil, err
	}
	mode, ok := shellModeToStore[req.GetMode()]
	if !ok {
		return nil, fault.New(fault.InvalidArgument, "mode must be SHELL_MODE_STANDARD or SHELL_MODE_MINIMAL")
	}
	c := req.GetConversation()
	if err := shellModeKey(c, req.GetAgentName(), req.GetWorkerKey()); err != nil {
		return nil, err
	}
	target := shellmode.Target{Agent: req.GetAgentName(), Channel: c.GetChannel(), Thread: c.GetThread(), WorkerKey: req.GetWorkerKey()}
	setting, err := s.shellModes.modes.Set(ctx, op, target, mode)
	if err != nil {
		return nil, err
	}
	return &operatorv1.SetShellModeResponse{Setting: shellModeSettingToProto(setting)}, nil
}

// ResetShellMode implements OperatorService.
func (s *Server) ResetShellMode(ctx context.Context, req *operatorv1.ResetShellModeRequest) (*operatorv1.ResetShellModeResponse, error) {
	op, err := caller(ctx, true, "reset a shell mode")
	if err != nil {
		return nil, err
	}
	c := req.GetConversation()
	if err := shellModeKey(c, req.GetAgentName(), ""); err != nil {
		return nil, err
	}
	setting, err := s.shellModes.store.ResetShellMode(ctx, c.GetChannel(), c.GetThread(), req.GetAgentName(), op.Name)
	if err != nil {
		return nil, err
	}
	s.logger.Info("shell mode reset", "operator", op.Name, "channel", c.GetChannel(), "thread", c.GetThread(),
		"agent", req.GetAgentName())
	return &operatorv1.ResetShellModeResponse{Setting: shellModeSettingToProto(setting)}, nil
}

var shellModeToStore = map[operatorv1.ShellMode]store.ShellMode{
	operatorv1.ShellMode_SHELL_MODE_STANDARD: store.ShellModeStandard,
	operatorv1.ShellMode_SHELL_MODE_MINIMAL:  store.ShellModeMinimal,
}

func shellModeSettingToProto(m store.ShellModeSetting) *operatorv1.ShellModeSetting {
	out := &operatorv1.ShellModeSetting{UpdatedBy: m.UpdatedBy, UpdatedAt: timestamp(m.UpdatedAt), WorkerKey: m.WorkerKey, Unplaced: m.Unplaced}
	for pm, sm := range shellModeToStore {
		if sm == m.Mode {
			out.Mode = pm
		}
	}
	return out
}
