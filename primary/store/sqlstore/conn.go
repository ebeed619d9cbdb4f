package sqlstore

import (
	"context"
	"fmt"

	"github.com/turncli/turncli/primary/store"
)

// Queryer runs the shared SQL on one database: its pool, or one transaction. Each driver
// adapts its own client to it (database/sql for SQLite, pgx for PostgreSQL) without
// rewriting anything: the queries it receives are already in the database's dialect.
type Queryer interface {
	// Query runs a query that returns rows.
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	// QueryRow runs a query that returns at most one row; a missing row is the Scan error
	// sql.ErrNoRows (pgx.ErrNoRows wraps it).
	QueryRow(ctx context.Context, query string, args ...any) Row
}

// Conn is a write transaction: its queries, its statements, and the statements it may hold
// back (see Queue).
type Conn interface {
	Queryer
	// Exec runs a statement and returns how many rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	// Queue runs query, or holds it back to go with the transaction's next statement, or its
	// commit, in one round trip where the database can batch them (store.Tx's Queue methods).
	// read reads query's rows once they arrive and closes them. The function returned waits
	// for query, sending it first if it is still held, and returns query's failure, read's,
	// or that of a statement held before it. A failure of query or of read fails the
	// transaction even when the function is never called.
	Queue(ctx context.Context, read func(Rows) error, query string, args ...any) (wait func() error)
}

// Statement is a statement with its arguments, in the database's dialect.
type Statement struct {
	SQL  string
	Args []any
}

// Row is one row of a result.
type Row interface {
	Scan(dest ...any) error
}

// Rows is a result of several rows, as database/sql and pgx both iterate them.
type Rows interface {
	Row
	Next() bool
	Err() error
	Close()
}

// collect reads every row of rows with scan and closes them.
func collect[T any](rows Rows, scan func(Row) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// only is the one record a query by id found, or store.ErrNotFound naming what it is.
func only[T any](found []T, err error, what string, id int64) (T, error) {
	var none T
	if err != nil {
		return none, err
	}
	if len(found) == 0 {
		return none, fmt.Errorf("%w: %s %d", store.ErrNotFound, what, id)
	}
	return found[0], nil
}
