package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// Reader implements store.Reader with the shared SQL, on a database's pool (the latest
// committed state) or inside a transaction (its own writes included).
type Reader struct {
	d Dialect
	q Queryer
}

// NewReader returns the reads of q in dialect d.
func NewReader(d Dialect, q Queryer) Reader { return Reader{d: d, q: q} }

// Tx implements store.Tx with the shared SQL inside one write transaction. A driver runs
// whatever the transaction needs first (its begin, a fence) before making it.
type Tx struct {
	Reader
	c Conn
}

var (
	_ store.Reader = Reader{}
	_ store.Tx     = (*Tx)(nil)
)

// NewTx returns the reads and writes of transaction c in dialect d.
func NewTx(d Dialect, c Conn) *Tx { return &Tx{Reader: Reader{d: d, q: c}, c: c} }

func (r Reader) query(ctx context.Context, query string, args ...any) (Rows, error) {
	return r.q.Query(ctx, r.d.Bind(query), args...)
}

func (r Reader) queryRow(ctx context.Context, query string, args ...any) Row {
	return r.q.QueryRow(ctx, r.d.Bind(query), args...)
}

// limit is a list's LIMIT argument: none for zero.
func (r Reader) limit(n int) any { return r.d.Limit(n) }

// exec runs a statement and reports how many rows it changed.
func (t *Tx) exec(ctx context.Context, what, query string, args ...any) (int64, error) {
	n, err := t.c.Exec(ctx, t.d.Bind(query), args...)
	if err != nil {
		return 0, fmt.Errorf("store: %s: %w", what, err)
	}
	return n, nil
}

// expect queues the dialect's check of cond (see Dialect.Expect): the transaction fails with
// store.ErrUnmatched unless cond holds.
func (t *Tx) expect(ctx context.Context, cond string, args ...any) {
	check := t.d.Expect(cond, args...)
	t.c.Queue(ctx, func(rows Rows) error {
		held, err := collect(rows, func(row Row) (bool, error) {
			var ok bool
			return ok, row.Scan(&ok)
		})
		if err == nil && (len(held) != 1 || !held[0]) {
			err = store.ErrUnmatched
		}
		return err
	}, t.d.Bind(check.SQL), check.Args...)
}

// firstFailure waits for queued statements in the order they were queued and returns the
// first failure: the later ones report the same failure, as "failed before it".
func firstFailure(waits ...func() error) error {
	for _, wait := range waits {
		if err := wait(); err != nil {
			return err
		}
	}
	return nil
}

// scanID reads a row of one id.
func scanID(row Row) (int64, error) {
	var id int64
	return id, row.Scan(&id)
}

// Times are stored as Unix nanoseconds; an unset time is NULL.
func nanos(t time.Time) int64 { return t.UnixNano() }

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

// nullID is a nullable id column's value: NULL for zero.
func nullID(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

func nullNanos(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	n := t.UnixNano()
	return &n
}

func fromNullNanos(n *int64) time.Time {
	if n == nil {
		return time.Time{}
	}
	return fromNanos(*n)
}
