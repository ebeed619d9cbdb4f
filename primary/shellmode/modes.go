package shellmode

import (
	"context"
	"log/slog"

	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/store"
)

// Checker is the preflight a minimal mode must pass before it is stored (Preflight).
type Checker interface {
	Check(ctx context.Context, t Target) []Problem
}

// Modes stores agents' shell modes as people set them, wherever they set them (the operator
// API, the dashboard, a chat's "!mode" command): only an admin may, and the minimal mode only
// when its preflight finds no problem with the agent's shell. It is safe for concurrent use.
type Modes struct {
	store  store.ShellModes
	check  Checker
	logger *slog.Logger
}

// NewModes returns the modes kept in s and checked by check.
func NewModes(s store.ShellModes, check Checker, logger *slog.Logger) *Modes {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Modes{store: s, check: check, logger: logger}
}

// Set stores mode for t's agent in t's conversation, placed on t's worker key, as by. A
// minimal mode is stored with the placement its preflight checked (a mode usable for the
// primary's own shells says nothing of a worker key's, nor the reverse); when the preflight
// finds problems, nothing is saved and the error (FailedPrecondition) names each with its
// fix. A standard mode is always stored.
func (m *Modes) Set(ctx context.Context, by store.Operator, t Target, mode store.ShellMode) (store.ShellModeSetting, error) {
	if by.Role != store.RoleAdmin {
		return store.ShellModeSetting{}, fault.Newf(fault.PermissionDenied, "only admins set shell modes; %s is a %s", by.Name, by.Role)
	}
	if mode == store.ShellModeMinimal {
		if problems := m.check.Check(ctx, t); len(problems) > 0 {
			m.logger.Info("minimal shell mode refused", "operator", by.Name, "channel", t.Channel, "thread", t.Thread,
				"agent", t.Agent, "worker_key", t.WorkerKey, "problems", len(problems))
			return store.ShellModeSetting{}, Refusal(t.Agent, "nothing was saved", problems)
		}
	}
	setting, err := m.store.SetShellMode(ctx, t.Channel, t.Thread, t.Agent, mode, t.WorkerKey, by.Name)
	if err != nil {
		return store.ShellModeSetting{}, err
	}
	m.logger.Info("shell mode set", "operator", by.Name, "channel", t.Channel, "thread", t.Thread,
		"agent", t.Agent, "mode", string(mode), "worker_key", t.WorkerKey)
	return setting, nil
}
