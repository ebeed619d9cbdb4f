package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// maxStatements bounds the writer's prepared statements: the store's statements are a fixed
// set, and the few built from a filter have a bounded number of shapes, so the bound is only
// a guard; a statement beyond it is prepared for its transaction alone.
const maxStatements = 256

// statements keeps the write transactions' statements prepared on the single writer
// connection, so a transaction binds and runs them instead of parsing and planning its SQL
// again each time. A statement first met inside a transaction cannot be prepared on the
// writer then (the transaction holds its only connection): it is prepared for that
// transaction and noted, and prepared for good once the transaction has ended.
type statements struct {
	db       *sql.DB
	mu       sync.Mutex
	prepared map[string]*sql.Stmt
	missed   map[string]bool // met unprepared since the last prepareMissed
}

func newStatements(db *sql.DB) *statements {
	return &statements{db: db, prepared: map[string]*sql.Stmt{}, missed: map[string]bool{}}
}

// inTx returns query's statement bound to tx.
func (s *statements) inTx(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	s.mu.Lock()
	st, ok := s.prepared[query]
	if !ok && s.prepared != nil && len(s.prepared)+len(s.missed) < maxStatements {
		s.missed[query] = true
	}
	s.mu.Unlock()
	if ok {
		// On the connection it was prepared on, the transaction uses the prepared statement.
		return tx.StmtContext(ctx, st), nil
	}
	return tx.PrepareContext(ctx, query)
}

// prepareMissed prepares on the writer the statements transactions met unprepared. It runs
// between transactions; a statement that fails to prepare is left to be met again.
func (s *statements) prepareMissed(ctx context.Context) {
	s.mu.Lock()
	missed := s.missed
	s.missed = map[string]bool{}
	s.mu.Unlock()
	for query := range missed {
		st, err := s.db.PrepareContext(ctx, query)
		if err != nil {
			continue
		}
		s.mu.Lock()
		if _, dup := s.prepared[query]; dup || s.prepared == nil { // nil: closed meanwhile
			st.Close()
		} else {
			s.prepared[query] = st
		}
		s.mu.Unlock()
	}
}

// close releases every prepared statement.
func (s *statements) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.prepared {
		st.Close()
	}
	s.prepared = nil
}

// preparedTx is a write transaction whose statements come from statements; it has the
// methods of *sql.Tx the driver uses.
type preparedTx struct {
	tx    *sql.Tx
	stmts *statements
}

func (t preparedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := t.stmts.inTx(ctx, t.tx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (t preparedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := t.stmts.inTx(ctx, t.tx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// QueryRowContext reports a failure to prepare through the row's Scan, as *sql.Tx does.
func (t preparedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := t.stmts.inTx(ctx, t.tx, query)
	if err != nil {
		// A query that cannot be prepared fails the same way when run: let *sql.Tx report it.
		return t.tx.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}
