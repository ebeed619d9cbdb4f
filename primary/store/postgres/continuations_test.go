package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/pgtest"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/postgres"
)

// An enqueue holds the outbox lock from its insert to its commit: a second enqueue waits for
// it, so continuations commit in id order.
func TestEnqueueHoldsTheOutboxLockUntilCommit(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	d := openDriver(t, url, postgres.Options{})
	s := store.New(d, store.Options{})
	watcher := postgres.Connect(t, url)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

	inserted, release := make(chan int64), make(chan struct{})
	var released sync.Once
	// Whatever happens, the first transaction ends before the driver closes.
	defer released.Do(func() { close(release) })
	firstDone := make(chan error, 1)
	go func() {
		firstDone <- d.Update(ctx, func(tx store.Tx) error {
			id, created, err := tx.InsertContinuation(ctx, store.NewContinuation{IdempotencyKey: "first", Channel: "!c", Text: "one"}, at)
			if err != nil || !created {
				close(inserted)
				return err
			}
			inserted <- id
			<-release
			return nil
		})
	}()
	firstID, ok := <-inserted
	if !ok {
		t.Fatalf("first enqueue: %v", <-firstDone)
	}

	type result struct {
		id  int64
		err error
	}
	second := make(chan result, 1)
	go func() {
		id, _, err := s.EnqueueContinuation(ctx, store.NewContinuation{IdempotencyKey: "second", Channel: "!c", Text: "two"})
		second <- result{id, err}
	}()
	// The second enqueue waits on the advisory lock while the first is uncommitted.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var waiting int
		if err := watcher.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting == 1 {
			break
		}
		select {
		case r := <-second:
			t.Fatalf("the second enqueue finished (id %d, %v) while the first held the lock", r.id, r.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the second enqueue never waited for the outbox lock")
		}
		time.Sleep(10 * time.Millisecond)
	}
	released.Do(func() { close(release) })
	if err := <-firstDone; err != nil {
		t.Fatalf("first enqueue: %v", err)
	}
	r := <-second
	if r.err != nil {
		t.Fatalf("second enqueue: %v", r.err)
	}
	if r.id <= firstID {
		t.Fatalf("second continuation has id %d, not above the first's %d", r.id, firstID)
	}
}
