package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// InsertContinuation implements store.Tx: the queued insert, read at once.
func (t *Tx) InsertContinuation(ctx context.Context, c store.NewContinuation, at time.Time) (int64, bool, error) {
	return t.QueueContinuation(ctx, c, at)()
}

// QueueContinuation implements store.Tx. The unique key makes the insert a no-op when the key
// exists; the id is read after it, in the same transaction, either way, so that the result
// is known at the commit without another statement.
//
// Ids must commit in increasing order: were two transactions to take ids 5 and 6 and commit
// 6 first, a subscriber that read 6 would ask only for ids above 6 and never see 5 until it
// subscribed again. Where writers run concurrently the dialect's ContinuationOrder (a lock
// held to the commit) is queued first, to go with the insert.
func (t *Tx) QueueContinuation(ctx context.Context, c store.NewContinuation, at time.Time) func() (int64, bool, error) {
	ordered := func() error { return nil }
	if order := t.d.ContinuationOrder(); order.SQL != "" {
		ordered = t.c.Queue(ctx, discard, order.SQL, order.Args...)
	}
	var checkpoint []byte // NULL for none
	if len(c.Checkpoint) > 0 {
		checkpoint = c.Checkpoint
	}
	inserted := false
	insert := t.c.Queue(ctx, func(rows Rows) error {
		ids, err := collect(rows, scanID)
		inserted = len(ids) == 1
		return err
	}, t.d.Bind(`INSERT INTO continuations (idempotency_key, channel, thread, text, post, checkpoint, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (idempotency_key) DO NOTHING RETURNING id`),
		c.IdempotencyKey, c.Channel, c.Thread, c.Text, c.Post, checkpoint, nanos(at))
	var id int64
	read := t.c.Queue(ctx, func(rows Rows) error {
		ids, err := collect(rows, scanID)
		if err == nil && len(ids) == 1 {
			id = ids[0]
		}
		return err
	}, t.d.Bind(`SELECT id FROM continuations WHERE idempotency_key = ?`), c.IdempotencyKey)
	return func() (int64, bool, error) {
		// The order first: were its lock refused, the insert would not have run.
		if err := firstFailure(ordered, insert, read); err != nil {
			return 0, false, fmt.Errorf("store: enqueue continuation: %w", err)
		}
		return id, inserted, nil
	}
}

// discard reads rows whose content is not needed: a statement run for its effect.
func discard(rows Rows) error {
	rows.Close()
	return rows.Err()
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

// ContinuationByKey implements store.Reader.
func (r Reader) ContinuationByKey(ctx context.Context, key string) (store.Continuation, error) {
	var c store.Continuation
	var created int64
	var acked sql.NullInt64
	err := r.queryRow(ctx, `SELECT id, idempotency_key, channel, thread, text, post, checkpoint, created_at, delivered_count, acked_at
		FROM continuations WHERE idempotency_key = ?`, key).
		Scan(&c.ID, &c.IdempotencyKey, &c.Channel, &c.Thread, &c.Text, &c.Post, &c.Checkpoint, &created, &c.DeliveredCount, &acked)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.Continuation{}, fmt.Errorf("%w: continuation %q", store.ErrNotFound, key)
	case err != nil:
		return store.Continuation{}, fmt.Errorf("store: continuation: %w", err)
	}
	c.CreatedAt = fromNanos(created)
	if acked.Valid {
		c.AckedAt = fromNanos(acked.Int64)
	}
	return c, nil
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
