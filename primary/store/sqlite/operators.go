package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/turncli/turncli/primary/store"
)

func validOperator(o store.NewOperator) error {
	switch {
	case !store.ValidOperatorName(o.Name):
		return invalid("operator name %q: use 1..128 letters, digits and . _ : @ = + -, starting with a letter, digit or @", o.Name)
	case !o.Role.Valid():
		return invalid("operator role %q is not member or admin", o.Role)
	case o.Digest == [32]byte{}:
		return invalid("an operator needs a credential digest")
	}
	return nil
}

func insertOperator(ctx context.Context, tx *sql.Tx, o store.NewOperator, now int64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO operators (name, role, digest, created_at) VALUES (?, ?, ?, ?)`,
		o.Name, string(o.Role), o.Digest[:], now)
	var se *sqlite.Error
	if errors.As(err, &se) && (se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE) {
		return fmt.Errorf("store: operator %q: %w", o.Name, store.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("store: create operator: %w", err)
	}
	return nil
}

// CreateOperator implements store.Operators.
func (s *Store) CreateOperator(ctx context.Context, o store.NewOperator) (store.Operator, error) {
	if err := validOperator(o); err != nil {
		return store.Operator{}, err
	}
	now := nanos(s.now())
	if err := s.inTx(ctx, func(tx *sql.Tx) error { return insertOperator(ctx, tx, o, now) }); err != nil {
		return store.Operator{}, err
	}
	s.operatorChanges.Add(1)
	return store.Operator{Name: o.Name, Role: o.Role, Digest: o.Digest, CreatedAt: fromNanos(now)}, nil
}

// CreateFirstOperator implements store.Operators.
func (s *Store) CreateFirstOperator(ctx context.Context, o store.NewOperator) (store.Operator, bool, error) {
	if err := validOperator(o); err != nil {
		return store.Operator{}, false, err
	}
	now := nanos(s.now())
	created := false
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM operators`).Scan(&n); err != nil {
			return fmt.Errorf("store: count operators: %w", err)
		}
		if n > 0 {
			return nil
		}
		created = true
		return insertOperator(ctx, tx, o, now)
	})
	if err != nil || !created {
		return store.Operator{}, false, err
	}
	s.operatorChanges.Add(1)
	return store.Operator{Name: o.Name, Role: o.Role, Digest: o.Digest, CreatedAt: fromNanos(now)}, true, nil
}

// ListOperators implements store.Operators.
func (s *Store) ListOperators(ctx context.Context) ([]store.Operator, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT name, role, digest, created_at FROM operators ORDER BY name`)
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

// RemoveOperator implements store.Operators.
func (s *Store) RemoveOperator(ctx context.Context, name string) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM operators WHERE name = ?`, name)
		if err != nil {
			return fmt.Errorf("store: remove operator: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("store: operator %q: %w", name, store.ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.operatorChanges.Add(1)
	return nil
}

var _ store.OperatorChanges = (*Store)(nil)

// OperatorsStamp implements store.OperatorChanges: the count of operator changes, read from
// shared memory without a query or a system call.
func (s *Store) OperatorsStamp() uint64 { return s.operatorChanges.Load() }
