package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// InsertContinuation implements store.Tx: a key already used finds its continuation.
func (t *tx) InsertContinuation(_ context.Context, c store.NewContinuation, at time.Time) (int64, bool, error) {
	if id, ok := t.s.continuationKeys[c.IdempotencyKey]; ok {
		return id, false, nil
	}
	id := t.s.continuations.insert(t, store.Continuation{
		ID: t.s.continuations.nextID(), IdempotencyKey: c.IdempotencyKey, Channel: c.Channel, Thread: c.Thread,
		Text: c.Text, Post: c.Post, Checkpoint: blob(c.Checkpoint), CreatedAt: stamp(at),
	})
	put(t, t.s.continuationKeys, c.IdempotencyKey, id)
	return id, true, nil
}

// QueueContinuation implements store.Tx: the store is in this process, so the insert is not
// held back.
func (t *tx) QueueContinuation(ctx context.Context, c store.NewContinuation, at time.Time) func() (int64, bool, error) {
	id, created, err := t.InsertContinuation(ctx, c, at)
	return func() (int64, bool, error) { return id, created, err }
}

// PendingContinuations implements store.Reader.
func (v view) PendingContinuations(_ context.Context, after int64, limit int) ([]store.Continuation, error) {
	defer v.read()()
	var out []store.Continuation
	rows := v.s.continuations.rows
	for i := max(after, 0); i < int64(len(rows)) && !limited(len(out), limit); i++ {
		if c := rows[i]; c.AckedAt.IsZero() {
			c.Checkpoint = blob(c.Checkpoint)
			out = append(out, c)
		}
	}
	return out, nil
}

// ContinuationByKey implements store.Reader.
func (v view) ContinuationByKey(_ context.Context, key string) (store.Continuation, error) {
	defer v.read()()
	id, ok := v.s.continuationKeys[key]
	if !ok {
		return store.Continuation{}, fmt.Errorf("%w: continuation %q", store.ErrNotFound, key)
	}
	c, _ := v.s.continuations.get(id)
	c.Checkpoint = blob(c.Checkpoint)
	return c, nil
}

// CountContinuationDelivery implements store.Tx.
func (t *tx) CountContinuationDelivery(_ context.Context, id int64) (attempt int, pending bool, err error) {
	c, ok := t.s.continuations.get(id)
	if !ok || !c.AckedAt.IsZero() {
		return 0, false, nil
	}
	c.DeliveredCount++
	t.s.continuations.set(t, id, c)
	return c.DeliveredCount, true, nil
}

// AckContinuation implements store.Tx; the first acknowledgement's time is kept.
func (t *tx) AckContinuation(_ context.Context, id int64, at time.Time) error {
	c, ok := t.s.continuations.get(id)
	if !ok {
		return fmt.Errorf("%w: continuation %d", store.ErrNotFound, id)
	}
	if c.AckedAt.IsZero() {
		c.AckedAt = stamp(at)
		t.s.continuations.set(t, id, c)
	}
	return nil
}
