package threadfeed

import (
	"context"
	"slices"

	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/interaction"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/store"
)

// Choices returns the item key names as it now stands (its whole text) and the decisions
// the person the account id is linked to may take on it now, under the rules Decide relays
// to: the item's actions, less those the engines keep for admins when that person is a
// member. It refuses as Decide would: an account linked to nobody or to someone who is not
// an operator (PermissionDenied), an item that takes no decision (InvalidArgument), a closed
// item (Conflict, saying how and by whom).
func (f *Feed) Choices(ctx context.Context, id Identity, key string) (Item, []Action, error) {
	p, err := f.resolve(ctx, id)
	if err != nil {
		return Item{}, nil, err
	}
	it, err := f.Item(ctx, key, 0)
	if err != nil {
		return Item{}, nil, err
	}
	switch {
	case it.Kind == KindQuestionForm:
		return Item{}, nil, fault.New(fault.InvalidArgument, "a question form is answered, saved or cancelled, not decided")
	case len(actionsOf(it.Kind)) == 0:
		return Item{}, nil, fault.Newf(fault.InvalidArgument, "a %s takes no decision", it.Kind)
	case it.State == StateClosed:
		return Item{}, nil, closedErr(it)
	}
	op, err := p.decider(id)
	if err != nil {
		return Item{}, nil, err
	}
	allowed := slices.DeleteFunc(slices.Clone(actionsOf(it.Kind)), func(a Action) bool { return mayTake(op, it.Kind, a) != nil })
	return it, allowed, nil
}

// mayTake is the engines' refusal of op taking decision on an item of kind, asked before
// anything is read or changed; nil when the engines let op try.
func mayTake(op store.Operator, kind Kind, decision Action) error {
	switch {
	case kind == KindCommandApproval && decision == ActionApprove:
		return interaction.CheckCommandApprover(op)
	case kind == KindCallApproval && decision == ActionApprove:
		return response.CheckCallApprover(op)
	case kind == KindPermission && decision == ActionAllowConversation:
		return interaction.CheckConversationAllower(op)
	}
	return nil
}
