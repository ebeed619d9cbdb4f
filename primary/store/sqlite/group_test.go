package sqlite

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// holdWriter runs a transaction that keeps the writer until release is closed, and returns
// once it holds it.
func holdWriter(t *testing.T, d *Driver) (release func()) {
	t.Helper()
	held, done := make(chan struct{}), make(chan struct{})
	ended := make(chan error, 1)
	go func() {
		ended <- d.Update(context.Background(), func(store.Tx) error {
			close(held)
			<-done
			return nil
		})
	}()
	<-held
	return func() {
		close(done)
		if err := <-ended; err != nil {
			t.Errorf("the holding transaction: %v", err)
		}
	}
}

// awaitQueued waits until n transactions wait for the writer.
func awaitQueued(t *testing.T, d *Driver, n int) {
	t.Helper()
	for range 2000 {
		d.writer.mu.Lock()
		queued := len(d.writer.queued)
		d.writer.mu.Unlock()
		if queued == n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("never saw %d transactions queued", n)
}

// insertMode writes one row whose thread is thread, inside st.
func insertMode(st store.Tx, thread string) error {
	_, err := st.(*tx).tx.ExecContext(context.Background(), `INSERT INTO conversation_modes (channel, thread, mode, updated_at, updated_by)
		VALUES ('!r', ?, 'ask', 1, 'ada')`, thread)
	return err
}

func storedThreads(t *testing.T, d *Driver) string {
	t.Helper()
	var got string
	if err := d.read.QueryRowContext(context.Background(),
		`SELECT coalesce(group_concat(thread, ','), '') FROM (SELECT thread FROM conversation_modes ORDER BY thread)`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	return got
}

// Transactions queued behind a running one share its successor's commit; one that fails, or
// panics, is undone alone, and its caller gets its own error or panic.
func TestQueuedTransactionsCommitTogetherAndFailAlone(t *testing.T) {
	d := openTestDriver(t)
	release := holdWriter(t, d)
	errFail := errors.New("fail")
	results := make([]any, 4)
	var wg sync.WaitGroup
	for i, f := range []func(store.Tx) error{
		func(st store.Tx) error { return insertMode(st, "a") },
		func(st store.Tx) error {
			if err := insertMode(st, "b"); err != nil {
				return err
			}
			return errFail
		},
		func(st store.Tx) error {
			if err := insertMode(st, "c"); err != nil {
				return err
			}
			panic("boom")
		},
		func(st store.Tx) error {
			// It sees the writes of the group's transactions before it, and the undone
			// ones are gone.
			var seen string
			if err := st.(*tx).tx.QueryRowContext(context.Background(),
				`SELECT group_concat(thread, ',') FROM conversation_modes`).Scan(&seen); err != nil {
				return err
			}
			if seen != "a" {
				return fmt.Errorf("saw %q before its own write, want a", seen)
			}
			return insertMode(st, "d")
		},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if v := recover(); v != nil {
					results[i] = v
				}
			}()
			results[i] = d.Update(context.Background(), f)
		}()
		awaitQueued(t, d, i+1)
	}
	release()
	wg.Wait()
	if results[0] != nil || results[3] != nil {
		t.Errorf("committed members: %v, %v; want nil", results[0], results[3])
	}
	if err, _ := results[1].(error); !errors.Is(err, errFail) {
		t.Errorf("failing member: %v, want its own error", results[1])
	}
	if results[2] != "boom" {
		t.Errorf("panicking member: %v, want its panic again", results[2])
	}
	if got := storedThreads(t, d); got != "a,d" {
		t.Errorf("stored %q, want a,d", got)
	}
}

// A group whose commit cannot happen fails every member that would have committed: here a
// member's statement breaks a deferred foreign key, which SQLite checks only at COMMIT.
func TestAFailedGroupCommitFailsItsMembers(t *testing.T) {
	d := openTestDriver(t)
	release := holdWriter(t, d)
	results := make([]error, 2)
	var wg sync.WaitGroup
	for i, f := range []func(store.Tx) error{
		func(st store.Tx) error { return insertMode(st, "a") },
		func(st store.Tx) error {
			_, err := st.(*tx).tx.ExecContext(context.Background(), `PRAGMA defer_foreign_keys = ON`)
			if err == nil {
				_, err = st.(*tx).tx.ExecContext(context.Background(), `INSERT INTO approval_comments (approval_id, actor, text, at)
					VALUES (424242, 'ada', 'orphan', 1)`)
			}
			return err
		},
	} {
		wg.Add(1)
		go func() { defer wg.Done(); results[i] = d.Update(context.Background(), f) }()
		awaitQueued(t, d, i+1)
	}
	release()
	wg.Wait()
	for i, err := range results {
		if err == nil {
			t.Errorf("member %d committed, want the group's commit failure", i)
		}
	}
	if got := storedThreads(t, d); got != "" {
		t.Errorf("stored %q, want nothing", got)
	}
	if err := d.Update(context.Background(), func(st store.Tx) error { return insertMode(st, "z") }); err != nil {
		t.Fatalf("a transaction after the failed group: %v", err)
	}
}

// Many writers at once all commit, whatever groups they form.
func TestConcurrentWritersAllCommit(t *testing.T) {
	d := openTestDriver(t)
	const writers = 40
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- d.Update(context.Background(), func(st store.Tx) error { return insertMode(st, fmt.Sprintf("%02d", i)) })
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := selectIn(t, d, `SELECT count(*) FROM conversation_modes`); got != writers {
		t.Fatalf("%d rows, want %d", got, writers)
	}
}
