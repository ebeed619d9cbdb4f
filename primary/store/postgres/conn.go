package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/turncli/turncli/primary/store"
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

// writeConn adapts a write transaction, whose statements may be held back to go with the
// next (pipeline), to sqlstore.Conn.
type writeConn struct {
	queries
	p *pipeline
}

func newWriteConn(p *pipeline) writeConn { return writeConn{queries: queries{p}, p: p} }

func (c writeConn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := c.p.Exec(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// Queue holds query, to go with the transaction's next statement or its commit.
func (c writeConn) Queue(ctx context.Context, read func(sqlstore.Rows) error, query string, args ...any) func() error {
	var (
		done bool // query was sent and its result read
		err  error
	)
	c.p.hold(func(br pgx.BatchResults) error {
		done = true
		rows, qerr := br.Query()
		if qerr != nil {
			rows.Close()
			err = qerr
		} else {
			err = read(rows)
		}
		err = unmatched(err)
		return err
	}, query, args...)
	return func() error {
		if !done {
			if ferr := c.p.flush(ctx); ferr != nil && !done {
				return ferr
			}
		}
		if !done { // a statement held before it failed, and the transaction with it
			return errors.New("the transaction failed before it")
		}
		return err
	}
}

// unmatched is err, marked store.ErrUnmatched when it is store_expect's refusal.
func unmatched(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == expectationFailed {
		return fmt.Errorf("%w (%s)", store.ErrUnmatched, pe.Message)
	}
	return err
}
