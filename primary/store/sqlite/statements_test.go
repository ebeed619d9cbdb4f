package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

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

// A statement a transaction meets unprepared is prepared on the writer once the transaction
// has ended, and the next transaction runs that prepared statement.
func TestStatementsPreparedAfterFirstTransaction(t *testing.T) {
	d := openTestDriver(t)
	const query = `SELECT 41 + 1`
	if got := selectIn(t, d, query); got != 42 {
		t.Fatalf("first run: %d, want 42", got)
	}
	first, ok := d.stmts.prepared[query]
	if !ok {
		t.Fatalf("%q is not prepared after its first transaction", query)
	}
	if got := selectIn(t, d, query); got != 42 {
		t.Fatalf("second run: %d, want 42", got)
	}
	if d.stmts.prepared[query] != first || len(d.stmts.missed) != 0 {
		t.Fatalf("the second transaction prepared %q again", query)
	}
}

// Beyond maxStatements, statements run prepared for their transaction alone.
func TestStatementsBounded(t *testing.T) {
	d := openTestDriver(t)
	before := len(d.stmts.prepared)
	for i := range maxStatements + 10 {
		if got := selectIn(t, d, fmt.Sprintf("SELECT %d", i)); got != int64(i) {
			t.Fatalf("SELECT %d returned %d", i, got)
		}
	}
	if got := len(d.stmts.prepared); got != maxStatements {
		t.Fatalf("%d statements prepared (%d before), want exactly %d", got, before, maxStatements)
	}
	if got := selectIn(t, d, fmt.Sprintf("SELECT %d", maxStatements+5)); got != maxStatements+5 {
		t.Fatalf("a statement beyond the bound returned %d", got)
	}
	if len(d.stmts.prepared) != maxStatements || len(d.stmts.missed) != 0 {
		t.Fatalf("the bound was exceeded: %d prepared, %d waiting", len(d.stmts.prepared), len(d.stmts.missed))
	}
}
