package threadfeed

import (
	"context"
	"errors"
	"strings"

	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/store"
)

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
