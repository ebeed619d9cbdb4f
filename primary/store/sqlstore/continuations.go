package sqlstore

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
//
// Ids must commit in increasing order: were two transactions to take ids 5 and 6 and commit
// 6 first, a subscriber that read 6 would ask only for ids above 6 and never see 5 until it
// subscribed again. Where writers run concurrently the dialect's ContinuationOrder (a lock
// held to the commit) runs first, in the same round trip as the insert.
func (t *Tx) InsertContinuation(ctx context.Context, c store.NewContinuation, at time.Time) (int64, bool, error) {
	var checkpoint []byte // NULL for none
	if len(c.Checkpoint) > 0 {
		checkpoint = c.Checkpoint
	}
	var id int64
	err := t.c.QueryRowAfter(ctx, t.d.ContinuationOrder(), t.d.Bind(`INSERT INTO continuations (idempotency_key,
		channel, thread, text, post, checkpoint, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (idempotency_key) DO NOTHING RETURNING id`),
		c.IdempotencyKey, c.Channel, c.Thread, c.Text, c.Post, checkpoint, nanos(at)).Scan(&id)
	if err == nil {
		return id, true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, false, fmt.Errorf("store: enqueue continuation: %w", err)
	}
	if err := t.queryRow(ctx, `SELECT id FROM continuations WHERE idempotency_key = ?`, c.IdempotencyKey).Scan(&id); err != nil {
		return 0, false, fmt.Errorf("store: enqueue continuation: %w", err)
	}
	return id, false, nil
}

// PendingContinuations implements store.Reader.
func (r Reader) PendingContinuations(ctx context.Context, after int64, limit int) ([]store.Continuation, error) {
	rows, err := r.query(ctx, `SELECT id, idempotency_key, channel, thread, text, post, checkpoint, created_at, delivered_count
		FROM continuations WHERE acked_at IS NULL AND id > ? ORDER BY id LIMIT ?`, after, r.limit(limit))
	if err != nil {
		return nil, fmt.Errorf("store: pending continuations: %w", err)
	}
	out, err := collect(rows, func(row Row) (store.Continuation, error) {
		var c store.Continuation
		var created int64
		err := row.Scan(&c.ID, &c.IdempotencyKey, &c.Channel, &c.Thread, &c.Text, &c.Post, &c.Checkpoint, &created, &c.DeliveredCount)
		c.CreatedAt = fromNanos(created)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: pending continuations: %w", err)
	}
	return out, nil
}

// CountContinuationDelivery implements store.Tx.
func (t *Tx) CountContinuationDelivery(ctx context.Context, id int64) (attempt int, pending bool, err error) {
	err = t.queryRow(ctx, `UPDATE continuations SET delivered_count = delivered_count + 1
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
func (t *Tx) AckContinuation(ctx context.Context, id int64, at time.Time) error {
	n, err := t.exec(ctx, "ack continuation", `UPDATE continuations SET acked_at = coalesce(acked_at, ?) WHERE id = ?`, nanos(at), id)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%w: continuation %d", store.ErrNotFound, id)
	}
	return nil
}
