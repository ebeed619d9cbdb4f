package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/turncli/turncli/primary/store"
)

// InsertOperator implements store.Tx: a name or a digest already stored is refused, as the
// schema's primary key and unique digest are.
func (t *tx) InsertOperator(_ context.Context, o store.Operator) error {
	if _, taken := t.s.operators[o.Name]; taken {
		return fmt.Errorf("store: operator %q: %w", o.Name, store.ErrExists)
	}
	for _, other := range t.s.operators {
		if other.Digest == o.Digest {
			return fmt.Errorf("store: operator %q: %w", o.Name, store.ErrExists)
		}
	}
	o.CreatedAt = stamp(o.CreatedAt)
	put(t, t.s.operators, o.Name, o)
	t.operatorsChanged = true
	return nil
}

// ListOperators implements store.Reader.
func (v view) ListOperators(context.Context) ([]store.Operator, error) {
	defer v.read()()
	var out []store.Operator
	for _, o := range v.s.operators {
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b store.Operator) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// DeleteOperator implements store.Tx.
func (t *tx) DeleteOperator(_ context.Context, name string) error {
	if _, ok := remove(t, t.s.operators, name); !ok {
		return fmt.Errorf("store: operator %q: %w", name, store.ErrNotFound)
	}
	t.operatorsChanged = true
	return nil
}
