package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pipeline is one write transaction on a pooled connection of its own, whose statements go
// to the server in as few round trips as their results allow. A statement whose result the
// transaction does not need yet (BEGIN, the fence check, the outbox lock, a write store.Tx
// lets a driver hold back) is held and sent in one batch with the next statement, or with the
// COMMIT. Held statements run in the order they were held, before the statement they go with,
// and the first of them to fail fails that statement: each is checked as it arrives.
//
// A round trip costs a wake-up of the server's backend and of this process, which under load
// is most of a short transaction's time; the commit's flush to disk is paid once whatever the
// count.
type pipeline struct {
	conn *pgxpool.Conn
	held pgx.Batch
	// checks reads the result of each held statement, in order.
	checks []func(pgx.BatchResults) error
	// sent: BEGIN has gone to the server, so ending the transaction needs a statement.
	sent bool
}

// hold queues a statement; check reads its result when it has been sent.
func (p *pipeline) hold(check func(pgx.BatchResults) error, sql string, args ...any) {
	p.held.Queue(sql, args...)
	p.checks = append(p.checks, check)
}

// execResult is the check of a held statement whose result is only its success.
func execResult(br pgx.BatchResults) error {
	_, err := br.Exec()
	return err
}

// send sends the held statements and then sql (none when empty), reads the held ones'
// results, and returns the batch positioned at sql's result; the caller reads that result
// and closes the batch.
func (p *pipeline) send(ctx context.Context, sql string, args ...any) (pgx.BatchResults, error) {
	b, checks := p.held, p.checks
	p.held, p.checks = pgx.Batch{}, nil
	if sql != "" {
		b.Queue(sql, args...)
	}
	p.sent = true
	br := p.conn.SendBatch(ctx, &b)
	for _, check := range checks {
		if err := check(br); err != nil {
			br.Close()
			return nil, err
		}
	}
	return br, nil
}

// flush sends the held statements alone.
func (p *pipeline) flush(ctx context.Context) error {
	if p.held.Len() == 0 {
		return nil
	}
	br, err := p.send(ctx, "")
	if err != nil {
		return err
	}
	return br.Close()
}

// Exec runs sql after the held statements.
func (p *pipeline) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if p.held.Len() == 0 {
		return p.conn.Exec(ctx, sql, args...)
	}
	br, err := p.send(ctx, sql, args...)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := br.Exec()
	return tag, errors.Join(err, br.Close())
}

// Query runs sql after the held statements.
func (p *pipeline) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if p.held.Len() == 0 {
		return p.conn.Query(ctx, sql, args...)
	}
	br, err := p.send(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		rows.Close()
		return nil, errors.Join(err, br.Close())
	}
	return &batchRows{Rows: rows, batch: br}, nil
}

// QueryRow runs sql after the held statements.
func (p *pipeline) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	rows, err := p.Query(ctx, sql, args...)
	return firstRow{rows: rows, err: err}
}

// commit sends the held statements and COMMIT.
func (p *pipeline) commit(ctx context.Context) error {
	br, err := p.send(ctx, "COMMIT")
	if err != nil {
		return err
	}
	tag, err := br.Exec()
	if err = errors.Join(err, br.Close()); err != nil {
		return err
	}
	// A transaction that failed on the server answers COMMIT with ROLLBACK.
	if tag.String() != "COMMIT" {
		return pgx.ErrTxCommitRollback
	}
	return nil
}

// rollback ends a transaction that was sent; one that never was has nothing to end. A failure
// leaves the connection in its transaction, and the pool discards a connection returned so.
func (p *pipeline) rollback(ctx context.Context) {
	if p.sent && p.conn.Conn().PgConn().TxStatus() != 'I' {
		_, _ = p.conn.Exec(ctx, "ROLLBACK")
	}
}

// batchRows are a statement's rows read from a batch: the batch closes with them.
type batchRows struct {
	pgx.Rows
	batch  pgx.BatchResults
	closed bool
	err    error
}

func (r *batchRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.Close()
	return false
}

func (r *batchRows) Close() {
	if r.closed {
		return
	}
	r.closed = true
	r.Rows.Close()
	r.err = r.batch.Close()
}

func (r *batchRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.err
}

// firstRow is QueryRow's row: the first of the rows, pgx.ErrNoRows when there is none.
type firstRow struct {
	rows pgx.Rows
	err  error
}

func (r firstRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}
