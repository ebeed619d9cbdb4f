package threadfeed

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/interaction"
	"github.com/turncli/turncli/primary/store"
)

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
