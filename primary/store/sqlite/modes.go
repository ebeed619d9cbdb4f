package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/turncli/turncli/primary/store"
)

// ConversationMode implements store.ConversationModes.
func (s *Store) ConversationMode(ctx context.Context, channel, thread string) (store.ModeSetting, error) {
	var m store.ModeSetting
	var updated int64
	err := s.read.QueryRowContext(ctx, `SELECT mode, updated_at, updated_by FROM conversation_modes
		WHERE channel = ? AND thread = ?`, channel, thread).Scan(&m.Mode, &updated, &m.UpdatedBy)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.ModeSetting{Mode: store.ModeAsk}, nil
	case err != nil:
		return m, fmt.Errorf("store: conversation mode: %w", err)
	}
	m.UpdatedAt = fromNanos(updated)
	return m, nil
}

// SetConversationMode implements store.ConversationModes: the mode is written first and the
// audit entry second, in one transaction, so a failed audit write leaves the mode unchanged.
func (s *Store) SetConversationMode(ctx context.Context, channel, thread string, mode store.Mode, actor string) (store.ModeSetting, error) {
	switch {
	case channel == "":
		return store.ModeSetting{}, invalid("a conversation needs a channel")
	case !mode.Valid():
		return store.ModeSetting{}, invalid("mode %q is not ask, auto or admin", mode)
	case actor == "":
		return store.ModeSetting{}, invalid("a mode change needs an actor")
	}
	now := s.now()
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		previous := store.ModeAsk
		err := tx.QueryRowContext(ctx, `SELECT mode FROM conversation_modes WHERE channel = ? AND thread = ?`,
			channel, thread).Scan(&previous)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("store: set conversation mode: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO conversation_modes (channel, thread, mode, updated_at, updated_by)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (channel, thread) DO UPDATE
			SET mode = excluded.mode, updated_at = excluded.updated_at, updated_by = excluded.updated_by`,
			channel, thread, mode, nanos(now), actor); err != nil {
			return fmt.Errorf("store: set conversation mode: %w", err)
		}
		detail, err := json.Marshal(map[string]string{"channel": channel, "thread": thread, "mode": string(mode), "previous": string(previous)})
		if err != nil {
			return err
		}
		_, err = insertAudit(ctx, tx, store.NewAuditEntry{
			Actor: actor, Action: store.ActionConversationModeSet, Subject: store.ConversationSubject(channel, thread), Detail: detail,
		}, now)
		return err
	})
	if err != nil {
		return store.ModeSetting{}, err
	}
	return store.ModeSetting{Mode: mode, UpdatedAt: fromNanos(nanos(now)), UpdatedBy: actor}, nil
}
