package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/turncli/turncli/primary/store"
)

const surfaceCardColumns = `surface, item_key, room, thread, message_id, shown, updated_at`

func scanSurfaceCard(row Row) (store.SurfaceCard, error) {
	var c store.SurfaceCard
	var updated int64
	err := row.Scan(&c.Surface, &c.ItemKey, &c.Room, &c.Thread, &c.MessageID, &c.Shown, &updated)
	c.UpdatedAt = fromNanos(updated)
	return c, err
}

// oneSurfaceCard reads the card a query names, or store.ErrNotFound.
func oneSurfaceCard(row Row) (store.SurfaceCard, error) {
	c, err := scanSurfaceCard(row)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.SurfaceCard{}, fmt.Errorf("%w: surface card", store.ErrNotFound)
	case err != nil:
		return store.SurfaceCard{}, fmt.Errorf("store: surface card: %w", err)
	}
	return c, nil
}

// SurfaceCard implements store.Reader.
func (r Reader) SurfaceCard(ctx context.Context, surface, itemKey string) (store.SurfaceCard, error) {
	return oneSurfaceCard(r.queryRow(ctx, `SELECT `+surfaceCardColumns+` FROM surface_cards
		WHERE surface = ? AND item_key = ?`, surface, itemKey))
}

// SurfaceCardByMessage implements store.Reader.
func (r Reader) SurfaceCardByMessage(ctx context.Context, surface, messageID string) (store.SurfaceCard, error) {
	return oneSurfaceCard(r.queryRow(ctx, `SELECT `+surfaceCardColumns+` FROM surface_cards
		WHERE surface = ? AND message_id = ?`, surface, messageID))
}

// SurfacePosition implements store.Reader.
func (r Reader) SurfacePosition(ctx context.Context, surface, name string) (store.SurfacePosition, error) {
	p := store.SurfacePosition{Surface: surface, Name: name}
	var updated int64
	err := r.queryRow(ctx, `SELECT value, updated_at FROM surface_positions WHERE surface = ? AND name = ?`,
		surface, name).Scan(&p.Value, &updated)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.SurfacePosition{}, fmt.Errorf("%w: surface position", store.ErrNotFound)
	case err != nil:
		return store.SurfacePosition{}, fmt.Errorf("store: surface position: %w", err)
	}
	p.UpdatedAt = fromNanos(updated)
	return p, nil
}

// PutSurfaceCard implements store.Tx. The message is checked first: a refused row would
// abort the transaction on PostgreSQL.
func (t *Tx) PutSurfaceCard(ctx context.Context, c store.SurfaceCard) error {
	var other string
	err := t.queryRow(ctx, `SELECT item_key FROM surface_cards WHERE surface = ? AND message_id = ?`,
		c.Surface, c.MessageID).Scan(&other)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return fmt.Errorf("store: save surface card: %w", err)
	case other != c.ItemKey:
		return fmt.Errorf("store: %s message %q is the card of %s: %w", c.Surface, c.MessageID, other, store.ErrExists)
	}
	_, err = t.exec(ctx, "save surface card", `INSERT INTO surface_cards (`+surfaceCardColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (surface, item_key) DO UPDATE
		SET room = excluded.room, thread = excluded.thread, message_id = excluded.message_id,
		shown = excluded.shown, updated_at = excluded.updated_at`,
		c.Surface, c.ItemKey, c.Room, c.Thread, c.MessageID, c.Shown, nanos(c.UpdatedAt))
	return err
}

// PutSurfacePosition implements store.Tx.
func (t *Tx) PutSurfacePosition(ctx context.Context, p store.SurfacePosition) error {
	_, err := t.exec(ctx, "save surface position", `INSERT INTO surface_positions (surface, name, value, updated_at)
		VALUES (?, ?, ?, ?) ON CONFLICT (surface, name) DO UPDATE
		SET value = excluded.value, updated_at = excluded.updated_at`,
		p.Surface, p.Name, p.Value, nanos(p.UpdatedAt))
	return err
}
