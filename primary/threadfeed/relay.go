package threadfeed

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/interaction"
	"github.com/turncli/turncli/primary/store"
)

// Decide takes decision on the item key names, as the person the account id is linked to,
// with text (a denial's reason or a comment), through the engine the operator API calls for
// that item, and returns the item as it then stands. seen is what the person saw of it: an
// approval or allowance of a text they saw only cut short is refused (checkSeen). When
// another decision came first, nothing changes and the error (Conflict) says how and by whom
// the item closed. The audit entry of the decision names the account (store.WithVia).
func (f *Feed) Decide(ctx context.Context, id Identity, key string, decision Action, text string, seen Seen) (Item, error) {
	p, err := f.resolve(ctx, id)
	if err != nil {
		return Item{}, err
	}
	it, err := f.Item(ctx, key, seen.CardBytes)
	if err != nil {
		return Item{}, err
	}
	kind := strings.ReplaceAll(string(it.Kind), "_", " ")
	switch {
	case it.Kind == KindQuestionForm:
		return Item{}, fault.New(fault.InvalidArgument, "a question form is answered, saved or cancelled, not decided")
	case len(actionsOf(it.Kind)) == 0:
		return Item{}, fault.Newf(fault.InvalidArgument, "a %s takes no decision", kind)
	case !slices.Contains(actionsOf(it.Kind), decision):
		return Item{}, fault.Newf(fault.InvalidArgument, "a %s takes %s, not %q", kind, actionList(it.Kind), decision)
	case it.State == StateClosed:
		return Item{}, closedErr(it)
	}
	if err := checkSeen(decision, it, seen); err != nil {
		return Item{}, err
	}
	op, err := p.decider(id)
	if err != nil {
		return Item{}, err
	}
	err = f.take(store.WithVia(ctx, p.via), it, op, decision, text)
	return f.settled(ctx, key, seen.CardBytes, err)
}

// take decides the open item it as op, through the engine the operator API calls for it.
func (f *Feed) take(ctx context.Context, it Item, op store.Operator, decision Action, text string) error {
	e, _ := eventOf(it.Key)
	id, _ := idOf(e.Key) // it was rendered: its key names a record
	var err error
	switch it.Kind {
	case KindCommandApproval:
		switch decision {
		case ActionApprove:
			_, err = f.cfg.Background.Approve(ctx, id, op)
		case ActionDeny:
			_, err = f.cfg.Background.Deny(ctx, id, op, text)
		default:
			_, err = f.cfg.Background.Comment(ctx, id, op, text)
		}
	case KindPlanApproval, KindPermission:
		_, err = f.cfg.Prompts.DecidePrompt(ctx, id, op, interaction.PromptDecision{Action: string(decision), Text: text})
	case KindCallApproval:
		if decision == ActionDeny {
			_, err = f.cfg.CallApprovals.Deny(ctx, id, op.Name, text)
		} else if text != "" {
			err = fault.New(fault.InvalidArgument, "an approval of a call takes no text")
		} else {
			_, err = f.cfg.CallApprovals.Approve(ctx, id, op)
		}
	}
	return err
}

// settled is the item after a relayed change: as it now stands, or, when the change lost to
// another, the error saying how it closed.
func (f *Feed) settled(ctx context.Context, key string, cardBytes int, err error) (Item, error) {
	ctx = context.WithoutCancel(ctx) // the change is made: report it even if the caller left
	if err != nil && !errors.Is(err, store.ErrConflict) {
		return Item{}, err
	}
	it, rerr := f.Item(ctx, key, cardBytes)
	switch {
	case rerr != nil:
		return Item{}, errors.Join(err, rerr)
	case err != nil && it.State == StateClosed:
		return Item{}, closedErr(it)
	case err != nil:
		return Item{}, err // a stale revision of a form that is still open
	}
	return it, nil
}

// closedErr is the answer to a decision on an item another closed first: how and by whom.
func closedErr(it Item) error {
	c := it.Closing
	how := string(c.How)
	if c.How == ClosedDecided {
		how = "decided (" + string(c.Decision) + ")"
	}
	by := ""
	if c.By != "" {
		by = " by " + c.By
	}
	if c.Via != nil {
		by += fmt.Sprintf(" from the %s account %q", c.Via.Surface, c.Via.ChatUserID)
	}
	return fault.Newf(fault.Conflict, "%s was already %s%s; nothing changed", it.Key, how, by)
}

// actionList is the actions of kind, for a refusal.
func actionList(kind Kind) string {
	var names []string
	for _, a := range actionsOf(kind) {
		names = append(names, string(a))
	}
	return strings.Join(names, ", ")
}
