package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/pgtest"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/postgres"
)

// A write held back to go with the next statement is sent after BEGIN and the fence check:
// a refused writer's queued write reports the refusal when its result is read, and nothing
// of the transaction is kept.
func TestAQueuedWriteOfARefusedWriterFails(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	d := openDriver(t, url, postgres.Options{Fence: 1})
	if _, err := postgres.Connect(t, url).Exec(ctx, `UPDATE leader_fence SET fence = 2 WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	var queuedErr error
	err := d.Update(ctx, func(tx store.Tx) error {
		_, _, queuedErr = tx.QueueContinuation(ctx, store.NewContinuation{IdempotencyKey: "k", Channel: "!c", Text: "x"}, time.Now())()
		return queuedErr
	})
	const want = "store: enqueue continuation: not the leader (fence 1, newest 2)"
	if !errors.Is(err, postgres.ErrNotLeader) || queuedErr == nil || queuedErr.Error() != want {
		t.Fatalf("Update = %v, queued write = %v; want ErrNotLeader, %q", err, queuedErr, want)
	}
	var n int
	if err := postgres.Connect(t, url).QueryRow(ctx, `SELECT count(*) FROM continuations`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("continuations stored: %d, %v; want none", n, err)
	}
}
