package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/turncli/turncli/primary/store"
)

// continuationOrder is the key of the advisory lock an enqueuing transaction holds from its
// insert to its commit ("outbox" in ASCII). Without it two transactions could take ids 5 and
// 6 and commit 6 first: a subscriber that read 6 would then ask only for ids above 6 and
// never see 5 until it subscribed again.
const continuationOrder int64 = 0x6f7574626f78

// InsertContinuation implements store.Tx: the unique key makes the insert a no-op when the
// key exists, and the existing id is then read in the same transaction.
func (t *tx) InsertContinuation(ctx context.Context, c store.NewContinuation, at time.Time) (int64, bool, error) {
	var checkpoint []byte // NULL for none
	if len(c.Checkpoint) > 0 {
		checkpoint = c.Checkpoint
	}
	// The lock and the insert go in one batch: one round trip, run in order, so the lock is
	// held before the insert takes its id.
	var b pgx.Batch
	b.Queue(`SELECT pg_advisory_xact_lock($1)`, continuationOrder)
	b.Queue(`INSERT INTO continuations (idempotency_key, channel, thread, text, post, checkpoint, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (idempotency_key) DO NOTHING RETURNING id`,
		c.IdempotencyKey, c.Channel, c.Thread, c.Text, c.Post, checkpoint, nanos(at))
	results := t.tx.SendBatch(ctx, &b)
	var id int64
	_, err := results.Exec()
	if err == nil {
		err = results.QueryRow().Scan(&id)
	}
	if closeErr := results.Close(); err == nil || errors.Is(err, pgx.ErrNoRows) && closeErr != nil {
		err = closeErr
	}
	if err == nil {
		return id, true, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return 0, false, fmt.Errorf("store: enqueue continuation: %w", err)
	}
	if err := t.tx.QueryRow(ctx, `SELECT id FROM continuations WHERE idempotency_key = $1`, c.IdempotencyKey).Scan(&id); err != nil {
		return 0, false, fmt.Errorf("store: enqueue continuation: %w", err)
	}
	return id, false, nil
}

// PendingContinuations implements store.Reader.
func (r reader) PendingContinuations(ctx context.Context, after int64, limit int) ([]store.Continuation, error) {
	rows, err := r.q.Query(ctx, `SELECT id, idempotency_key, channel, thread, text, post, checkpoint, created_at, delivered_count
		FROM continuations WHERE acked_at IS NULL AND id > $1 ORDER BY id LIMIT $2`, after, sqlLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("store: pending continuations: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Continuation, error) {
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
func (t *tx) CountContinuationDelivery(ctx context.Context, id int64) (attempt int, pending bool, err error) {
	err = t.tx.QueryRow(ctx, `UPDATE continuations SET delivered_count = delivered_count + 1
		WHERE id = $1 AND acked_at IS NULL RETURNING delivered_count`, id).Scan(&attempt)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("store: record delivery: %w", err)
	}
	return attempt, true, nil
}

// AckContinuation implements store.Tx; the first acknowledgement's time is kept.
func (t *tx) AckContinuation(ctx context.Context, id int64, at time.Time) error {
	n, err := t.exec(ctx, "ack continuation", `UPDATE continuations SET acked_at = coalesce(acked_at, $1) WHERE id = $2`, nanos(at), id)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%w: continuation %d", store.ErrNotFound, id)
	}
	return nil
}
