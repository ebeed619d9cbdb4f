package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ShellMode implements ShellModes.
func (p *Portable) ShellMode(ctx context.Context, channel, thread, agent string) (ShellModeSetting, error) {
	return shellMode(ctx, p.d, channel, thread, agent)
}

// shellMode is the stored shell mode, or the default when none is.
func shellMode(ctx context.Context, r Reader, channel, thread, agent string) (ShellModeSetting, error) {
	m, err := r.ShellMode(ctx, channel, thread, agent)
	if errors.Is(err, ErrNotFound) {
		return ShellModeSetting{Mode: ShellModeStandard}, nil
	}
	return m, err
}

// SetShellMode implements ShellModes: the mode is written first and the audit entry second,
// in one transaction, so a failed audit write leaves the mode unchanged.
func (p *Portable) SetShellMode(ctx context.Context, channel, thread, agent string, mode ShellMode, workerKey, actor string) (ShellModeSetting, error) {
	if err := checkShellModeKey(channel, agent, actor); err != nil {
		return ShellModeSetting{}, err
	}
	if !mode.Valid() {
		return ShellModeSetting{}, invalid("shell mode %q is not standard or minimal", mode)
	}
	set := ShellModeSetting{Mode: mode, WorkerKey: workerKey, UpdatedAt: p.clock(), UpdatedBy: actor}
	err := p.update(ctx, func(tx Tx) error {
		previous, err := shellMode(ctx, tx, channel, thread, agent)
		if err != nil {
			return fmt.Errorf("store: set shell mode: %w", err)
		}
		if err := tx.PutShellMode(ctx, channel, thread, agent, set); err != nil {
			return err
		}
		return auditShellMode(ctx, tx, set.UpdatedAt, ActionShellModeSet, channel, thread, agent, actor, map[string]string{
			"mode": string(mode), "worker_key": workerKey, "previous": string(previous.Mode),
		})
	})
	if err != nil {
		return ShellModeSetting{}, err
	}
	return set, nil
}

// ResetShellMode implements ShellModes: the mode is forgotten and the audit entry appended in
// one transaction.
func (p *Portable) ResetShellMode(ctx context.Context, channel, thread, agent, actor string) (ShellModeSetting, error) {
	if err := checkShellModeKey(channel, agent, actor); err != nil {
		return ShellModeSetting{}, err
	}
	at := p.clock()
	err := p.update(ctx, func(tx Tx) error {
		previous, err := shellMode(ctx, tx, channel, thread, agent)
		if err != nil {
			return fmt.Errorf("store: reset shell mode: %w", err)
		}
		if err := tx.DeleteShellMode(ctx, channel, thread, agent); err != nil {
			return err
		}
		return auditShellMode(ctx, tx, at, ActionShellModeReset, channel, thread, agent, actor, map[string]string{
			"previous": string(previous.Mode),
		})
	})
	if err != nil {
		return ShellModeSetting{}, err
	}
	return ShellModeSetting{Mode: ShellModeStandard}, nil
}

func checkShellModeKey(channel, agent, actor string) error {
	switch {
	case channel == "":
		return invalid("a conversation needs a channel")
	case agent == "":
		return invalid("a shell mode needs an agent")
	case actor == "":
		return invalid("a shell mode change needs an actor")
	}
	return nil
}

// auditShellMode appends a shell-mode entry; detail gets the conversation and agent.
func auditShellMode(ctx context.Context, tx Tx, at time.Time, action, channel, thread, agent, actor string, detail map[string]string) error {
	detail["channel"], detail["thread"], detail["agent"] = channel, thread, agent
	return audit(ctx, tx, at, actor, action, ShellModeSubject(channel, thread, agent), detail)
}
