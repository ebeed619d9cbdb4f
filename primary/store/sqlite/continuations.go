package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// EnqueueContinuation implements store.Continuations.
func (s *Store) EnqueueContinuation(ctx context.Context, c store.NewContinuation) (id int64, created bool, err error) {
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		id, created, err = insertContinuation(ctx, tx, c, s.now())
		return err
	})
	return id, created, err
}

// insertContinuation enqueues c inside tx, or finds the continuation with its key.
func insertContinuation(ctx context.Context, tx *sql.Tx, c store.NewContinuation, now time.Time) (int64, bool, error) {
	switch {
	case c.IdempotencyKey == "" || len(c.IdempotencyKey) > store.MaxIdempotencyKey:
		return 0, false, invalid("idempotency key must be 1..%d bytes", store.MaxIdempotencyKey)
	case c.Channel == "":
		return 0, false, invalid("a continuation needs a channel")
	case c.Text == "":
		return 0, false, invalid("a continuation needs a text")
	case len(c.Checkpoint) > store.MaxCheckpoint:
		return 0, false, invalid("a continuation's checkpoint exceeds %d bytes", store.MaxCheckpoint)
	}
	var checkpoint []byte // NULL for none
	if len(c.Checkpoint) > 0 {
		checkpoint = c.Checkpoint
	}
	var id int64
	err := tx.QueryRowContext(ctx, `INSERT INTO continuations (idempotency_key, channel, thread, text, post, checkpoint, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (idempotency_key) DO NOTHING RETURNING id`,
		c.IdempotencyKey, c.Channel, c.Thread, c.Text, c.Post, checkpoint, nanos(now)).Scan(&id)
	if err == nil {
		return id, true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, false, fmt.Errorf("store: enqueue continuation: %w", err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT id FROM continuations WHERE idempotency_key = ?`, c.IdempotencyKey).Scan(&id); err != nil {
		return 0, false, fmt.Errorf("store: enqueue continuation: %w", err)
	}
	return id, false, nil
}

// PendingContinuations implements store.Continuations.
func (s *Store) PendingContinuations(ctx context.Context, after int64, limit int) ([]store.Continuation, error) {
	if limit <= 0 {
		return nil, invalid("limit must be positive")
	}
	rows, err := s.read.QueryContext(ctx, `SELECT id, idempotency_key, channel, thread, text, post, checkpoint, created_at, delivered_count
		FROM continuations WHERE acked_at IS NULL AND id > ? ORDER BY id LIMIT ?`, after, limit)
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

// RecordContinuationDelivery implements store.Continuations.
func (s *Store) RecordContinuationDelivery(ctx context.Context, id int64) (attempt int, pending bool, err error) {
	err = s.write.QueryRowContext(ctx, `UPDATE continuations SET delivered_count = delivered_count + 1
		WHERE id = ? AND acked_at IS NULL RETURNING delivered_count`, id).Scan(&attempt)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("store: record delivery: %w", err)
	}
	return attempt, true, nil
}

// AckContinuation implements store.Continuations; the first acknowledgement's time is kept.
func (s *Store) AckContinuation(ctx context.Context, id int64) error {
	res, err := s.write.ExecContext(ctx, `UPDATE continuations SET acked_at = coalesce(acked_at, ?) WHERE id = ?`,
		nanos(s.now()), id)
	if err != nil {
		return fmt.Errorf("store: ack continuation: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: ack continuation: %w", err)
	} else if n == 0 {
		return fmt.Errorf("%w: continuation %d", store.ErrNotFound, id)
	}
	return nil
}
