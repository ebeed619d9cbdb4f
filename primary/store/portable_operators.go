package store

import "context"

func checkOperator(o NewOperator) error {
	switch {
	case !ValidOperatorName(o.Name):
		return invalid("operator name %q: use 1..128 letters, digits and . _ : @ = + -, starting with a letter, digit or @", o.Name)
	case !o.Role.Valid():
		return invalid("operator role %q is not member or admin", o.Role)
	case o.Digest == [32]byte{}:
		return invalid("an operator needs a credential digest")
	}
	return nil
}

// CreateOperator implements Operators.
func (p *Portable) CreateOperator(ctx context.Context, o NewOperator) (Operator, error) {
	if err := checkOperator(o); err != nil {
		return Operator{}, err
	}
	op := Operator{Name: o.Name, Role: o.Role, Digest: o.Digest, CreatedAt: p.clock()}
	if err := p.update(ctx, func(tx Tx) error { return tx.InsertOperator(ctx, op) }); err != nil {
		return Operator{}, err
	}
	return op, nil
}

// CreateFirstOperator implements Operators.
func (p *Portable) CreateFirstOperator(ctx context.Context, o NewOperator) (Operator, bool, error) {
	if err := checkOperator(o); err != nil {
		return Operator{}, false, err
	}
	op := Operator{Name: o.Name, Role: o.Role, Digest: o.Digest, CreatedAt: p.clock()}
	created := false
	err := p.update(ctx, func(tx Tx) error {
		created = false
		ops, err := tx.ListOperators(ctx)
		if err != nil || len(ops) > 0 {
			return err
		}
		created = true
		return tx.InsertOperator(ctx, op)
	})
	if err != nil || !created {
		return Operator{}, false, err
	}
	return op, true, nil
}

// ListOperators implements Operators.
func (p *Portable) ListOperators(ctx context.Context) ([]Operator, error) {
	return p.d.ListOperators(ctx)
}

// RemoveOperator implements Operators.
func (p *Portable) RemoveOperator(ctx context.Context, name string) error {
	at := p.clock()
	return p.update(ctx, func(tx Tx) error {
		if err := tx.DeleteOperator(ctx, name); err != nil {
			return err
		}
		// The chat accounts linked to the operator go with it: a later operator given the
		// same name must not inherit them and decide as whoever holds them.
		gone, err := tx.DeleteIdentityLinksOf(ctx, name)
		if err != nil {
			return err
		}
		for _, l := range gone {
			if err := audit(ctx, tx, at, primaryActor, ActionIdentityUnlink, IdentitySubject(l.Surface, l.ChatUserID),
				map[string]string{"surface": l.Surface, "chat_user_id": l.ChatUserID, "person": l.Person, "reason": "operator removed"}); err != nil {
				return err
			}
		}
		return nil
	})
}
