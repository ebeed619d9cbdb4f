package threadfeed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/interaction"
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

// Item returns the item key names ("approval/12") as it now stands, its preview cut to
// cardBytes (0: not cut).
func (f *Feed) Item(ctx context.Context, key string, cardBytes int) (Item, error) {
	if err := checkCardBytes(cardBytes); err != nil {
		return Item{}, err
	}
	e, err := eventOf(key)
	if err != nil {
		return Item{}, err
	}
	it, _, err := f.render(ctx, e, View{CardBytes: cardBytes})
	if errors.Is(err, store.ErrNotFound) {
		return Item{}, fault.Newf(fault.NotFound, "there is no item %q", key)
	}
	return it, err
}

// eventOf is a stand-in event for the item key names, to render it as it stands.
func eventOf(key string) (store.ThreadEvent, error) {
	kind, id, ok := strings.Cut(key, "/")
	switch store.ThreadItemKind(kind) {
	case store.ThreadApproval, store.ThreadPrompt, store.ThreadCallApproval, store.ThreadQuestion, store.ThreadProgress, store.ThreadJob:
		if ok && id != "" {
			return store.ThreadEvent{Kind: store.ThreadItemKind(kind), Key: id}, nil
		}
	}
	return store.ThreadEvent{}, fault.Newf(fault.InvalidArgument, "%q is not an item key such as approval/12", key)
}

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
	if it.Kind == KindQuestionForm {
		return Item{}, fault.New(fault.InvalidArgument, "a question form is answered, saved or cancelled, not decided")
	}
	if !slices.Contains(actionsOf(it.Kind), decision) {
		return Item{}, fault.Newf(fault.InvalidArgument, "a %s takes %s, not %q", strings.ReplaceAll(string(it.Kind), "_", " "), actionList(it.Kind), decision)
	}
	if it.State == StateClosed {
		return Item{}, closedErr(it)
	}
	if err := checkSeen(decision, it, seen); err != nil {
		return Item{}, err
	}
	op, err := p.decider(id)
	if err != nil {
		return Item{}, err
	}
	e, _ := eventOf(it.Key)
	recordID, _ := idOf(e.Key) // rendered: the key names a record
	ctx = store.WithVia(ctx, p.via)
	switch it.Kind {
	case KindCommandApproval:
		switch decision {
		case ActionApprove:
			_, err = f.cfg.Background.Approve(ctx, recordID, op)
		case ActionDeny:
			_, err = f.cfg.Background.Deny(ctx, recordID, op, text)
		default:
			_, err = f.cfg.Background.Comment(ctx, recordID, op, text)
		}
	case KindPlanApproval, KindPermission:
		_, err = f.cfg.Prompts.DecidePrompt(ctx, recordID, op, interaction.PromptDecision{Action: string(decision), Text: text})
	case KindCallApproval:
		if decision == ActionApprove {
			if text != "" {
				return Item{}, fault.New(fault.InvalidArgument, "an approval of a call takes no text")
			}
			_, err = f.cfg.CallApprovals.Approve(ctx, recordID, op)
		} else {
			_, err = f.cfg.CallApprovals.Deny(ctx, recordID, op.Name, text)
		}
	}
	return f.settled(ctx, key, seen.CardBytes, err)
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

// SaveFormDraft saves the answers so far of the form key names ("question/4"), as the person
// the account id is linked to, when revision is its current one.
func (f *Feed) SaveFormDraft(ctx context.Context, id Identity, key string, revision int64, answers json.RawMessage) (Item, error) {
	return f.form(ctx, id, key, func(ctx context.Context, q int64, by interaction.Person) error {
		_, err := f.cfg.Questions.SaveQuestionDraft(ctx, q, by, revision, answers)
		return err
	})
}

// SubmitForm submits the answers of the form key names, as the person the account id is
// linked to, when revision is its current one: only the form's requester may, operator or
// not (interaction.Questions' rule).
func (f *Feed) SubmitForm(ctx context.Context, id Identity, key string, revision int64, answers json.RawMessage) (Item, error) {
	return f.form(ctx, id, key, func(ctx context.Context, q int64, by interaction.Person) error {
		_, err := f.cfg.Questions.SubmitQuestionAnswers(ctx, q, by, revision, answers)
		return err
	})
}

// CancelForm withdraws the form key names, as the person the account id is linked to: its
// requester or an admin may.
func (f *Feed) CancelForm(ctx context.Context, id Identity, key string) (Item, error) {
	return f.form(ctx, id, key, func(ctx context.Context, q int64, by interaction.Person) error {
		_, err := f.cfg.Questions.CancelQuestion(ctx, q, by)
		return err
	})
}

// form runs change on the form key names as the linked person.
func (f *Feed) form(ctx context.Context, id Identity, key string, change func(context.Context, int64, interaction.Person) error) (Item, error) {
	p, err := f.resolve(ctx, id)
	if err != nil {
		return Item{}, err
	}
	e, err := eventOf(key)
	if err != nil {
		return Item{}, err
	}
	if e.Kind != store.ThreadQuestion {
		return Item{}, fault.Newf(fault.InvalidArgument, "%q is not a question form such as question/4", key)
	}
	q, err := idOf(e.Key)
	if err != nil {
		return Item{}, fault.Newf(fault.NotFound, "there is no item %q", key)
	}
	err = change(store.WithVia(ctx, p.via), q, interaction.Person{Name: p.name, Role: p.operator.Role})
	if errors.Is(err, store.ErrNotFound) {
		return Item{}, fault.Newf(fault.NotFound, "there is no item %q", key)
	}
	return f.settled(ctx, key, 0, err)
}
