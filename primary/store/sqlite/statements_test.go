package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/turncli/turncli/primary/store"
)

func openTestDriver(t *testing.T) *Driver {
	t.Helper()
	d, err := OpenDriver(context.Background(), filepath.Join(t.TempDir(), FileName), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return d
}

// selectIn runs query, which selects one integer, in its own write transaction.
func selectIn(t *testing.T, d *Driver, query string) int64 {
	t.Helper()
	var got int64
	err := d.Update(context.Background(), func(st store.Tx) error {
		return st.(*tx).tx.QueryRowContext(context.Background(), query).Scan(&got)
	})
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return got
}

// A statement a transaction meets first is prepared on the writer then, and the next
// transaction runs that prepared statement.
func TestStatementsPreparedOnFirstUse(t *testing.T) {
	d := openTestDriver(t)
	const query = `SELECT 41 + 1`
	if got := selectIn(t, d, query); got != 42 {
		t.Fatalf("first run: %d, want 42", got)
	}
	first, ok := d.writer.prepared[query]
	if !ok {
		t.Fatalf("%q is not prepared after its first use", query)
	}
	if got := selectIn(t, d, query); got != 42 {
		t.Fatalf("second run: %d, want 42", got)
	}
	if d.writer.prepared[query] != first {
		t.Fatalf("the second transaction prepared %q again", query)
	}
}

// Beyond maxStatements, statements run unprepared.
func TestStatementsBounded(t *testing.T) {
	d := openTestDriver(t)
	for i := range maxStatements + 10 {
		if got := selectIn(t, d, fmt.Sprintf("SELECT %d", i)); got != int64(i) {
			t.Fatalf("SELECT %d returned %d", i, got)
		}
	}
	if got := len(d.writer.prepared); got != maxStatements {
		t.Fatalf("%d statements prepared, want exactly %d", got, maxStatements)
	}
}

// A transaction whose function fails, or whose statement fails, leaves nothing behind, and
// the next transaction runs on a clean connection.
func TestFailedTransactionRollsBack(t *testing.T) {
	d := openTestDriver(t)
	ctx := context.Background()
	insert := func(st store.Tx, n int) error {
		_, err := st.(*tx).tx.ExecContext(ctx, `INSERT INTO conversation_modes (channel, thread, mode, updated_at, updated_by)
			VALUES ('!r', ?, 'ask', 1, 'ada')`, fmt.Sprint(n))
		return err
	}
	errFail := errors.New("fail")
	if err := d.Update(ctx, func(st store.Tx) error {
		if err := insert(st, 1); err != nil {
			return err
		}
		return errFail
	}); !errors.Is(err, errFail) {
		t.Fatalf("Update returned %v, want the function's error", err)
	}
	if err := d.Update(ctx, func(st store.Tx) error {
		if err := insert(st, 2); err != nil {
			return err
		}
		return insert(st, 2) // the primary key refuses it
	}); err == nil {
		t.Fatal("a duplicate row was committed")
	}
	if err := d.Update(ctx, func(st store.Tx) error { return insert(st, 3) }); err != nil {
		t.Fatalf("the next transaction: %v", err)
	}
	if got := selectIn(t, d, `SELECT group_concat(thread) FROM conversation_modes`); got != 3 {
		t.Fatalf("threads stored: %v, want only 3", got)
	}
}

// A transaction waiting for the writer gives up when its context ends.
func TestUpdateWaitsAsLongAsItsContext(t *testing.T) {
	d := openTestDriver(t)
	held, release := make(chan struct{}), make(chan struct{})
	go d.Update(context.Background(), func(store.Tx) error {
		close(held)
		<-release
		return nil
	})
	<-held
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := d.Update(ctx, func(store.Tx) error { return nil })
	close(release)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Update while the writer was held: %v, want the deadline", err)
	}
	if got := selectIn(t, d, `SELECT 7`); got != 7 {
		t.Fatalf("after: %d", got)
	}
}
