package sqlite

import (
	"context"
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/turncli/turncli/primary/store"
)

// InsertOperator implements store.Tx.
func (t *tx) InsertOperator(ctx context.Context, o store.Operator) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO operators (name, role, digest, created_at) VALUES (?, ?, ?, ?)`,
		o.Name, string(o.Role), o.Digest[:], nanos(o.CreatedAt))
	if isUniqueViolation(err) {
		return fmt.Errorf("store: operator %q: %w", o.Name, store.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("store: create operator: %w", err)
	}
	t.operatorsChanged = true
	return nil
}

// isUniqueViolation reports whether err is a primary key or unique constraint refusing a row.
func isUniqueViolation(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && (se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE)
}

// ListOperators implements store.Reader.
func (r reader) ListOperators(ctx context.Context) ([]store.Operator, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT name, role, digest, created_at FROM operators ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("store: list operators: %w", err)
	}
	defer rows.Close()
	var out []store.Operator
	for rows.Next() {
		var o store.Operator
		var digest []byte
		var created int64
		if err := rows.Scan(&o.Name, &o.Role, &digest, &created); err != nil {
			return nil, fmt.Errorf("store: list operators: %w", err)
		}
		if len(digest) != len(o.Digest) {
			return nil, fmt.Errorf("store: operator %q has a malformed digest", o.Name)
		}
		copy(o.Digest[:], digest)
		o.CreatedAt = fromNanos(created)
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list operators: %w", err)
	}
	return out, nil
}

// DeleteOperator implements store.Tx.
func (t *tx) DeleteOperator(ctx context.Context, name string) error {
	n, err := t.exec(ctx, "remove operator", `DELETE FROM operators WHERE name = ?`, name)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("store: operator %q: %w", name, store.ErrNotFound)
	}
	t.operatorsChanged = true
	return nil
}
