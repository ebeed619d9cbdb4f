package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// ShellMode implements store.ShellModes.
func (s *Store) ShellMode(ctx context.Context, channel, thread, agent string) (store.ShellModeSetting, error) {
	var m store.ShellModeSetting
	var updated int64
	err := s.read.QueryRowContext(ctx, `SELECT mode, updated_at, updated_by FROM shell_modes
		WHERE channel = ? AND thread = ? AND agent = ?`, channel, thread, agent).Scan(&m.Mode, &updated, &m.UpdatedBy)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.ShellModeSetting{Mode: store.ShellModeStandard}, nil
	case err != nil:
		return m, fmt.Errorf("store: shell mode: %w", err)
	}
	m.UpdatedAt = fromNanos(updated)
	return m, nil
}

// SetShellMode implements store.ShellModes: the mode is written first and the audit entry
// second, in one transaction, so a failed audit write leaves the mode unchanged.
func (s *Store) SetShellMode(ctx context.Context, channel, thread, agent string, mode store.ShellMode, actor string) (store.ShellModeSetting, error) {
	if err := checkShellModeKey(channel, agent, actor); err != nil {
		return store.ShellModeSetting{}, err
	}
	if !mode.Valid() {
		return store.ShellModeSetting{}, invalid("shell mode %q is not standard or minimal", mode)
	}
	now := s.now()
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		previous, err := storedShellMode(ctx, tx, channel, thread, agent)
		if err != nil {
			return fmt.Errorf("store: set shell mode: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO shell_modes (channel, thread, agent, mode, updated_at, updated_by)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (channel, thread, agent) DO UPDATE
			SET mode = excluded.mode, updated_at = excluded.updated_at, updated_by = excluded.updated_by`,
			channel, thread, agent, mode, nanos(now), actor); err != nil {
			return fmt.Errorf("store: set shell mode: %w", err)
		}
		return auditShellMode(ctx, tx, now, store.ActionShellModeSet, channel, thread, agent, actor, map[string]string{
			"mode": string(mode), "previous": string(previous),
		})
	})
	if err != nil {
		return store.ShellModeSetting{}, err
	}
	return store.ShellModeSetting{Mode: mode, UpdatedAt: fromNanos(nanos(now)), UpdatedBy: actor}, nil
}

// ResetShellMode implements store.ShellModes: the row is deleted and the audit entry appended
// in one transaction.
func (s *Store) ResetShellMode(ctx context.Context, channel, thread, agent, actor string) (store.ShellModeSetting, error) {
	if err := checkShellModeKey(channel, agent, actor); err != nil {
		return store.ShellModeSetting{}, err
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		previous, err := storedShellMode(ctx, tx, channel, thread, agent)
		if err != nil {
			return fmt.Errorf("store: reset shell mode: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM shell_modes WHERE channel = ? AND thread = ? AND agent = ?`,
			channel, thread, agent); err != nil {
			return fmt.Errorf("store: reset shell mode: %w", err)
		}
		return auditShellMode(ctx, tx, s.now(), store.ActionShellModeReset, channel, thread, agent, actor, map[string]string{
			"previous": string(previous),
		})
	})
	if err != nil {
		return store.ShellModeSetting{}, err
	}
	return store.ShellModeSetting{Mode: store.ShellModeStandard}, nil
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

// storedShellMode is the mode in effect inside tx: the stored one or the default.
func storedShellMode(ctx context.Context, tx *sql.Tx, channel, thread, agent string) (store.ShellMode, error) {
	previous := store.ShellModeStandard
	err := tx.QueryRowContext(ctx, `SELECT mode FROM shell_modes WHERE channel = ? AND thread = ? AND agent = ?`,
		channel, thread, agent).Scan(&previous)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", err
	}
	return previous, nil
}

// auditShellMode appends a shell-mode entry inside tx; detail gets the conversation and agent.
func auditShellMode(ctx context.Context, tx *sql.Tx, now time.Time, action, channel, thread, agent, actor string, detail map[string]string) error {
	detail["channel"], detail["thread"], detail["agent"] = channel, thread, agent
	raw, err := json.Marshal(detail)
	if err != nil {
		return err
	}
	_, err = insertAudit(ctx, tx, store.NewAuditEntry{
		Actor: actor, Action: action, Subject: store.ShellModeSubject(channel, thread, agent), Detail: raw,
	}, now)
	return err
}
