package threadfeed

import (
	"context"
	"errors"
	"slices"

	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/store"
)

// Identity is a chat account a person acted from, as the reader verified it: its surface
// ("matrix", "slack", a runtime's own chat) and its user id there.
type Identity struct {
	Surface    string
	ChatUserID string
}

// person is who a linked account acts as.
type person struct {
	name string
	// operator is the operator of that name; its Role is empty when there is none.
	operator store.Operator
	via      store.Via
}

// resolve is the person id's account is linked to. An account linked to nobody may do
// nothing; the refusal names the surface and the account, which its holder knows, and
// nothing of how links are kept.
func (f *Feed) resolve(ctx context.Context, id Identity) (person, error) {
	link, err := f.cfg.Store.IdentityLink(ctx, id.Surface, id.ChatUserID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return person{}, fault.Newf(fault.PermissionDenied,
			"the %s account %q is not linked to anyone here; an admin must link it before it can decide or answer", id.Surface, id.ChatUserID)
	case err != nil:
		return person{}, err
	}
	p := person{name: link.Person, via: store.Via{Surface: id.Surface, ChatUserID: id.ChatUserID}}
	ops, err := f.cfg.Store.ListOperators(ctx)
	if err != nil {
		return person{}, err
	}
	if i := slices.IndexFunc(ops, func(o store.Operator) bool { return o.Name == link.Person }); i >= 0 {
		p.operator = ops[i]
	}
	return p, nil
}

// decider is p as the operator who decides an approval or a prompt: deciding them is for
// operators, as on the operator API.
func (p person) decider(id Identity) (store.Operator, error) {
	if !p.operator.Role.Valid() {
		return store.Operator{}, fault.Newf(fault.PermissionDenied,
			"%s, whom the %s account %q is linked to, is not an operator: only operators decide approvals and prompts", p.name, id.Surface, id.ChatUserID)
	}
	return p.operator, nil
}
