package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/turncli/turncli/primary/store"
)

// IdentityLink implements store.Reader.
func (v view) IdentityLink(_ context.Context, surface, chatUserID string) (store.IdentityLink, error) {
	defer v.read()()
	l, ok := v.s.identityLinks[chatAccount{surface, chatUserID}]
	if !ok {
		return store.IdentityLink{}, fmt.Errorf("%w: identity link", store.ErrNotFound)
	}
	return l, nil
}

// ListIdentityLinks implements store.Reader, in store.IdentityLinkPosition's order.
func (v view) ListIdentityLinks(_ context.Context, f store.IdentityLinkFilter) ([]store.IdentityLink, error) {
	defer v.read()()
	var out []store.IdentityLink
	for _, l := range v.s.identityLinks {
		if equalOrAny(l.Surface, f.Surface) && equalOrAny(l.Person, f.Person) &&
			(f.After.CreatedAt.IsZero() || compareIdentityLink(l, f.After) > 0) {
			out = append(out, l)
		}
	}
	slices.SortFunc(out, func(a, b store.IdentityLink) int {
		return compareIdentityLink(a, store.IdentityLinkPosition{CreatedAt: b.CreatedAt, Surface: b.Surface, ChatUserID: b.ChatUserID})
	})
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// compareIdentityLink orders l against a position in store.IdentityLinkPosition's order: most
// recently linked first, then by surface and chat user id; negative when l comes first.
func compareIdentityLink(l store.IdentityLink, pos store.IdentityLinkPosition) int {
	return cmp.Or(pos.CreatedAt.Compare(l.CreatedAt), cmp.Compare(l.Surface, pos.Surface), cmp.Compare(l.ChatUserID, pos.ChatUserID))
}

// PutIdentityLink implements store.Tx.
func (t *tx) PutIdentityLink(_ context.Context, l store.IdentityLink) error {
	l.CreatedAt = stamp(l.CreatedAt)
	put(t, t.s.identityLinks, chatAccount{l.Surface, l.ChatUserID}, l)
	return nil
}

// DeleteIdentityLinksOf implements store.Tx.
func (t *tx) DeleteIdentityLinksOf(_ context.Context, person string) ([]store.IdentityLink, error) {
	var gone []store.IdentityLink
	for account, l := range t.s.identityLinks {
		if l.Person == person {
			remove(t, t.s.identityLinks, account)
			gone = append(gone, l)
		}
	}
	return gone, nil
}

// DeleteIdentityLink implements store.Tx.
func (t *tx) DeleteIdentityLink(_ context.Context, surface, chatUserID string) (store.IdentityLink, error) {
	gone, ok := remove(t, t.s.identityLinks, chatAccount{surface, chatUserID})
	if !ok {
		return store.IdentityLink{}, fmt.Errorf("%w: identity link", store.ErrNotFound)
	}
	return gone, nil
}
