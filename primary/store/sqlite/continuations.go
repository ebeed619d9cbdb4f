package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// InsertContinuation implements store.Tx: the unique key makes the insert a no-op when the
// key exists, and the existing id is then read in the same transaction.
func (t *tx) InsertContinuation(ctx context.Context, c store.NewContinuation, at time.Time) (int64, bool, error) {
	var checkpoint []byte // NULL for none
	if len(c.Checkpoint) > 0 {
		checkpoint = c.Checkpoint
	}
	var id int64
	err := t.tx.QueryRowContext(ctx, `INSERT INTO continuations (idempotency_key, channel, thread, text, post, checkpoint, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (idempotency_key) DO NOTHING RETURNING id`,
		c.IdempotencyKey, c.Channel, c.Thread, c.Text, c.Post, checkpoint, nanos(at)).Scan(&id)
	if err == nil {
		return id, true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, false, fmt.Errorf("store: enqueue continuation: %w", err)
	}
	if err := t.tx.QueryRowContext(ctx, `SELECT id FROM continuations WHERE idempotency_key = ?`, c.IdempotencyKey).Scan(&id); err != nil {
		return 0, false, fmt.Errorf("store: enqueue continuation: %w", err)
	}
	return id, false, nil
}

// PendingContinuations implements store.Reader.
func (r reader) PendingContinuations(ctx context.Context, after int64, limit int) ([]store.Continuation, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT id, idempotency_key, channel, thread, text, post, checkpoint, created_at, delivered_count
		FROM continuations WHERE acked_at IS NULL AND id > ? ORDER BY id LIMIT ?`, after, sqlLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("store: pending continuations: %w", err)
	}
	defer rows.Close()
	var out []store.Continuation
	for rows.Next() {
		var c store.Continuation
		var created int64
		if err := rows.Scan(&c.ID, &c.IdempotencyKey, &c.Channel, &c.Thread, &c.Text, &c.Post, &c.Checkpoint, &created, &c.DeliveredCount); err != nil {
			return nil, fmt.Errorf("store: pending continuations: %w", err)
		}
		c.CreatedAt = fromNanos(created)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: pending continuations: %w", err)
	}
	return out, nil
}

// CountContinuationDelivery implements store.Tx.
func (t *tx) CountContinuationDelivery(ctx context.Context, id int64) (attempt int, pending bool, err error) {
	err = t.tx.QueryRowContext(ctx, `UPDATE continuations SET delivered_count = delivered_count + 1
		WHERE id = ? AND acked_at IS NULL RETURNING delivered_count`, id).Scan(&attempt)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("store: record delivery: %w", err)
	}
	return attempt, true, nil
}

// AckContinuation implements store.Tx; the first acknowledgement's time is kept.
func (t *tx) AckContinuation(ctx context.Context, id int64, at time.Time) error {
	n, err := t.exec(ctx, "ack continuation", `UPDATE continuations SET acked_at = coalesce(acked_at, ?) WHERE id = ?`, nanos(at), id)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%w: continuation %d", store.ErrNotFound, id)
	}
	return nil
}
