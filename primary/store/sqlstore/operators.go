package sqlstore

import (
	"context"
	"fmt"

	"github.com/turncli/turncli/primary/store"
)

// InsertOperator implements store.Tx.
func (t *Tx) InsertOperator(ctx context.Context, o store.Operator) error {
	// A refused row must leave the transaction usable, and an error would abort it: the
	// conflict is read from the count instead.
	n, err := t.exec(ctx, "create operator", `INSERT INTO operators (name, role, digest, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT DO NOTHING`, o.Name, string(o.Role), o.Digest[:], nanos(o.CreatedAt))
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("store: operator %q: %w", o.Name, store.ErrExists)
	}
	return nil
}

// ListOperators implements store.Reader.
func (r Reader) ListOperators(ctx context.Context) ([]store.Operator, error) {
	rows, err := r.query(ctx, `SELECT name, role, digest, created_at FROM operators ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("store: list operators: %w", err)
	}
	out, err := collect(rows, func(row Row) (store.Operator, error) {
		var o store.Operator
		var role string
		var digest []byte
		var created int64
		if err := row.Scan(&o.Name, &role, &digest, &created); err != nil {
			return o, err
		}
		if len(digest) != len(o.Digest) {
			return o, fmt.Errorf("operator %q has a malformed digest", o.Name)
		}
		copy(o.Digest[:], digest)
		o.Role, o.CreatedAt = store.OperatorRole(role), fromNanos(created)
		return o, nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: list operators: %w", err)
	}
	return out, nil
}

// DeleteOperator implements store.Tx.
func (t *Tx) DeleteOperator(ctx context.Context, name string) error {
	n, err := t.exec(ctx, "remove operator", `DELETE FROM operators WHERE name = ?`, name)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("store: operator %q: %w", name, store.ErrNotFound)
	}
	return nil
}
