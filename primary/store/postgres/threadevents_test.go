package postgres_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/pgtest"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/postgres"
)

// A transaction that tells the thread feed holds the outbox lock to its commit: a second one
// waits for it, so the feed's ids commit in order and a reader never skips an event.
func TestThreadEventsCommitInIdOrder(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	d := openDriver(t, url, postgres.Options{})
	s := store.New(d, store.Options{})
	watcher := postgres.Connect(t, url)
	newApproval := func(command string) store.NewApproval {
		return store.NewApproval{Kind: "command", Channel: "!c", Thread: "t", Command: command, Workdir: "/"}
	}
	first, _, err := s.SaveApproval(ctx, newApproval("true 1"))
	if err != nil {
		t.Fatal(err)
	}

	told, release := make(chan struct{}), make(chan struct{})
	var released sync.Once
	defer released.Do(func() { close(release) })
	firstDone := make(chan error, 1)
	go func() {
		firstDone <- d.Update(ctx, func(tx store.Tx) error {
			tx.QueueThreadEvent(ctx, store.NewThreadEvent{Kind: store.ThreadApproval, Key: strconv.FormatInt(first.ID, 10),
				Change: store.ThreadUpdated}, time.Now())
			// A read sends what was queued, so the event is inserted before the wait.
			if _, err := tx.Approval(ctx, first.ID); err != nil {
				return err
			}
			close(told)
			<-release
			return nil
		})
	}()
	select {
	case <-told:
	case err := <-firstDone:
		t.Fatalf("first transaction: %v", err)
	}

	second := make(chan error, 1)
	go func() {
		_, _, err := s.SaveApproval(ctx, newApproval("true 2"))
		second <- err
	}()
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
		case err := <-second:
			t.Fatalf("the second transaction finished (%v) while the first held the lock", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the second transaction never waited for the outbox lock")
		}
		time.Sleep(10 * time.Millisecond)
	}
	released.Do(func() { close(release) })
	if err := <-firstDone; err != nil {
		t.Fatalf("first transaction: %v", err)
	}
	if err := <-second; err != nil {
		t.Fatalf("second transaction: %v", err)
	}
	es, err := s.ListThreadEvents(ctx, store.ThreadEventFilter{})
	if err != nil || len(es) != 3 {
		t.Fatalf("feed %+v, %v; want the first's opening, its update, the second's opening", es, err)
	}
	if es[1].Key != strconv.FormatInt(first.ID, 10) || es[1].Change != store.ThreadUpdated || es[2].Change != store.ThreadOpened {
		t.Fatalf("feed in id order %+v; want the held update before the second opening", es)
	}
}
