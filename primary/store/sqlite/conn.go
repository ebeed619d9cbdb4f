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
	// failed is the first failure of a queued statement, which fails the transaction whether
	// or not its result is read.
	failed *error
}

func newWriteConn(tx preparedTx) writeConn {
	return writeConn{queries: queries{tx}, tx: tx, failed: new(error)}
}

func (c writeConn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := c.tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// Queue runs query at once: SQLite is in this process, there is no round trip to save. Once
// a queued statement has failed, the ones after it fail the same way without running.
func (c writeConn) Queue(ctx context.Context, read func(sqlstore.Rows) error, query string, args ...any) func() error {
	err := *c.failed
	if err == nil {
		var rows sqlstore.Rows
		if rows, err = c.Query(ctx, query, args...); err == nil {
			err = read(rows)
		}
		*c.failed = err
	}
	return func() error { return err }
}
