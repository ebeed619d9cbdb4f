package sqlite

import (
	"context"
	"database/sql"

	"github.com/turncli/turncli/primary/store/sqlstore"
)

// sqlQueryer is what database/sql offers for queries: the read pool, or a write transaction
// through its prepared statements (preparedTx).
type sqlQueryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// queries adapts database/sql to the shared driver's sqlstore.Queryer.
type queries struct{ q sqlQueryer }

func (a queries) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	rows, err := a.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

func (a queries) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return a.q.QueryRowContext(ctx, query, args...)
}

// sqlRows is *sql.Rows, whose Close error repeats Err's.
type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { _ = r.Rows.Close() }

// writeConn adapts a write transaction to sqlstore.Conn.
type writeConn struct {
	queries
	tx preparedTx
}

func newWriteConn(tx preparedTx) writeConn { return writeConn{queries: queries{tx}, tx: tx} }

func (c writeConn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := c.tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// QueryRowAfter runs first, then query: SQLite is in process, there is no round trip to save.
func (c writeConn) QueryRowAfter(ctx context.Context, first sqlstore.Statement, query string, args ...any) sqlstore.Row {
	if first.SQL != "" {
		if _, err := c.tx.ExecContext(ctx, first.SQL, first.Args...); err != nil {
			return failedRow{err}
		}
	}
	return c.tx.QueryRowContext(ctx, query, args...)
}

// failedRow is a row whose statement failed before it could run.
type failedRow struct{ err error }

func (r failedRow) Scan(...any) error { return r.err }
