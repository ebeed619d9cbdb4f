package threadfeed

import (
	"context"

	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/shellmode"
	"github.com/turncli/turncli/primary/store"
)

// SetShellMode sets the agent's shell mode in the conversation, for the primary's own shells,
// as the person the account id is linked to, under shellmode.Modes' rule: only an admin may,
// and the minimal mode only when its preflight finds the agent's shell ready (the refusal
// names each problem and its fix). Responses already open keep their mode.
func (f *Feed) SetShellMode(ctx context.Context, id Identity, channel, thread, agent string, mode store.ShellMode) (store.ShellModeSetting, error) {
	if f.cfg.Modes == nil {
		return store.ShellModeSetting{}, fault.New(fault.FailedPrecondition, "shell modes cannot be set from a chat on this primary")
	}
	if mode != store.ShellModeMinimal && mode != store.ShellModeStandard {
		return store.ShellModeSetting{}, fault.Newf(fault.InvalidArgument, "a shell mode is %s or %s, not %q", store.ShellModeMinimal, store.ShellModeStandard, mode)
	}
	spec := response.Spec{Agent: agent, Channel: channel, Thread: thread}
	if err := spec.Validate(); err != nil {
		return store.ShellModeSetting{}, err
	}
	p, err := f.resolve(ctx, id)
	if err != nil {
		return store.ShellModeSetting{}, err
	}
	if !p.operator.Role.Valid() {
		return store.ShellModeSetting{}, fault.Newf(fault.PermissionDenied,
			"%s, whom the %s account %q is linked to, is not an operator: only admins set shell modes", p.name, id.Surface, id.ChatUserID)
	}
	setting, err := f.cfg.Modes.Set(store.WithVia(ctx, p.via), p.operator, shellmode.Target{Agent: agent, Channel: channel, Thread: thread}, mode)
	if err != nil {
		return store.ShellModeSetting{}, err
	}
	return setting, nil
}
