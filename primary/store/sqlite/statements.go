package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
)

// maxStatements bounds the writer's prepared statements: the store's statements are a fixed
// set, and the few built from a filter have a bounded number of shapes, so the bound is only
// a guard; a statement beyond it is prepared for one use.
const maxStatements = 256

// writer is the single write connection, held for the driver's life, and its statements
// kept prepared. Holding the connection lets a transaction's control statements (BEGIN
// IMMEDIATE, COMMIT, savepoints) run prepared instead of parsed each time, and lets a
// statement a transaction meets first be prepared for good at once, on the connection the
// transaction runs on. Transactions that arrive while another runs are committed together
// (see group.go).
type writer struct {
	conn *sql.Conn
	// turn is held by the goroutine running a group on conn.
	turn chan struct{}
	// queued are the transactions waiting for the next group.
	mu     sync.Mutex
	queued []*queuedTx
	// prepared is used only by the holder of turn.
	prepared map[string]*sql.Stmt

	begin, commit, rollback, savepoint, release, rollbackTo *sql.Stmt
}

func newWriter(ctx context.Context, db *sql.DB) (*writer, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	w := &writer{conn: conn, turn: make(chan struct{}, 1), prepared: map[string]*sql.Stmt{}}
	for _, s := range []struct {
		st  **sql.Stmt
		sql string
	}{
		{&w.begin, "BEGIN IMMEDIATE"}, {&w.commit, "COMMIT"}, {&w.rollback, "ROLLBACK"},
		{&w.savepoint, "SAVEPOINT member"}, {&w.release, "RELEASE member"}, {&w.rollbackTo, "ROLLBACK TO member"},
	} {
		if *s.st, err = conn.PrepareContext(ctx, s.sql); err != nil {
			w.close()
			return nil, err
		}
	}
	return w, nil
}

// isNoTransaction: ROLLBACK found no transaction, which SQLite has already ended (as it does
// on some errors).
func isNoTransaction(err error) bool {
	return strings.Contains(err.Error(), "no transaction is active")
}

// statement returns query prepared on the writer, or nil beyond maxStatements: the caller
// then runs query on the connection unprepared.
func (w *writer) statement(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := w.prepared[query]; ok || len(w.prepared) >= maxStatements {
		return st, nil
	}
	st, err := w.conn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	w.prepared[query] = st
	return st, nil
}

// preparedTx runs a write transaction's statements through the writer's prepared ones; it
// has the methods of *sql.Tx the driver uses.
type preparedTx struct{ w *writer }

func (t preparedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := t.w.statement(ctx, query)
	switch {
	case err != nil:
		return nil, err
	case st == nil:
		return t.w.conn.ExecContext(ctx, query, args...)
	}
	return st.ExecContext(ctx, args...)
}

func (t preparedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := t.w.statement(ctx, query)
	switch {
	case err != nil:
		return nil, err
	case st == nil:
		return t.w.conn.QueryContext(ctx, query, args...)
	}
	return st.QueryContext(ctx, args...)
}

// QueryRowContext reports a failure to prepare through the row's Scan, as *sql.Tx does.
func (t preparedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := t.w.statement(ctx, query)
	if err != nil || st == nil {
		// A query that cannot be prepared fails the same way when run: let the connection
		// report it.
		return t.w.conn.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// close releases the statements and the connection; closing again does nothing.
func (w *writer) close() error {
	for _, st := range w.prepared {
		st.Close()
	}
	for _, st := range []*sql.Stmt{w.begin, w.commit, w.rollback, w.savepoint, w.release, w.rollbackTo} {
		if st != nil {
			st.Close()
		}
	}
	if err := w.conn.Close(); !errors.Is(err, sql.ErrConnDone) {
		return err
	}
	return nil
}
