package sqlite

import (
	"context"

	"github.com/turncli/turncli/primary/store"
)

// InsertOperator implements store.Tx, noting the change for OperatorsStamp.
func (t *tx) InsertOperator(ctx context.Context, o store.Operator) error {
	if err := t.Tx.InsertOperator(ctx, o); err != nil {
		return err
	}
	t.operatorsChanged = true
	return nil
}

// DeleteOperator implements store.Tx, noting the change for OperatorsStamp.
func (t *tx) DeleteOperator(ctx context.Context, name string) error {
	if err := t.Tx.DeleteOperator(ctx, name); err != nil {
		return err
	}
	t.operatorsChanged = true
	return nil
}
