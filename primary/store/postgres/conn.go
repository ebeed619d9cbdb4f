package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/turncli/turncli/primary/store/sqlstore"
)

// pgxQueryer is what pgx offers for queries: the pool, or a transaction. Both keep pgx's
// statement cache.
type pgxQueryer interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// queries adapts pgx to the shared driver's sqlstore.Queryer.
type queries struct{ q pgxQueryer }

func (a queries) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	return a.q.Query(ctx, query, args...)
}

func (a queries) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return a.q.QueryRow(ctx, query, args...)
}

// writeConn adapts a write transaction to sqlstore.Conn.
type writeConn struct {
	queries
	tx pgx.Tx
}

func newWriteConn(tx pgx.Tx) writeConn { return writeConn{queries: queries{tx}, tx: tx} }

func (c writeConn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := c.tx.Exec(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// QueryRowAfter sends first and query in one batch: one round trip, run in order.
func (c writeConn) QueryRowAfter(ctx context.Context, first sqlstore.Statement, query string, args ...any) sqlstore.Row {
	if first.SQL == "" {
		return c.tx.QueryRow(ctx, query, args...)
	}
	return batchRow{ctx: ctx, tx: c.tx, first: first, query: query, args: args}
}

// batchRow is the row of a batch's second statement; Scan sends the batch.
type batchRow struct {
	ctx   context.Context
	tx    pgx.Tx
	first sqlstore.Statement
	query string
	args  []any
}

func (r batchRow) Scan(dest ...any) error {
	var b pgx.Batch
	b.Queue(r.first.SQL, r.first.Args...)
	b.Queue(r.query, r.args...)
	results := r.tx.SendBatch(r.ctx, &b)
	_, err := results.Exec()
	if err == nil {
		err = results.QueryRow().Scan(dest...)
	}
	// Closing reports a failure the results did not; a missing row is not one.
	if closeErr := results.Close(); err == nil || errors.Is(err, pgx.ErrNoRows) && closeErr != nil {
		err = closeErr
	}
	return err
}
