package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/turncli/turncli/internal/fieldrule"
)

// LinkIdentity implements IdentityLinks: the link is written first and the audit entry
// second, in one transaction, so a failed audit write leaves the account as it was.
func (p *Portable) LinkIdentity(ctx context.Context, l NewIdentityLink, actor string) (IdentityLink, bool, error) {
	if err := checkIdentity(l.Surface, l.ChatUserID); err != nil {
		return IdentityLink{}, false, err
	}
	if err := fieldrule.Check(fieldrule.Person, "person", l.Person); err != nil {
		return IdentityLink{}, false, invalid("%v", err)
	}
	if actor == "" {
		return IdentityLink{}, false, invalid("linking an account needs an actor")
	}
	link := IdentityLink{Surface: l.Surface, ChatUserID: l.ChatUserID, Person: l.Person, CreatedBy: actor, CreatedAt: p.clock()}
	replaced := false
	err := p.update(ctx, func(tx Tx) error {
		previous, err := tx.IdentityLink(ctx, l.Surface, l.ChatUserID)
		switch {
		case errors.Is(err, ErrNotFound):
			replaced = false
		case err != nil:
			return fmt.Errorf("store: link identity: %w", err)
		default:
			replaced = true
		}
		if err := tx.PutIdentityLink(ctx, link); err != nil {
			return err
		}
		return audit(ctx, tx, link.CreatedAt, actor, ActionIdentityLink, IdentitySubject(l.Surface, l.ChatUserID), map[string]string{
			"surface": l.Surface, "chat_user_id": l.ChatUserID, "person": l.Person, "previous": previous.Person,
		})
	})
	if err != nil {
		return IdentityLink{}, false, err
	}
	return link, replaced, nil
}

// UnlinkIdentity implements IdentityLinks.
func (p *Portable) UnlinkIdentity(ctx context.Context, surface, chatUserID, actor string) error {
	if err := checkIdentity(surface, chatUserID); err != nil {
		return err
	}
	if actor == "" {
		return invalid("unlinking an account needs an actor")
	}
	at := p.clock()
	return p.update(ctx, func(tx Tx) error {
		gone, err := tx.DeleteIdentityLink(ctx, surface, chatUserID)
		if errors.Is(err, ErrNotFound) {
			return fmt.Errorf("%w: %s account %q is not linked", ErrNotFound, surface, chatUserID)
		} else if err != nil {
			return err
		}
		return audit(ctx, tx, at, actor, ActionIdentityUnlink, IdentitySubject(surface, chatUserID), map[string]string{
			"surface": surface, "chat_user_id": chatUserID, "person": gone.Person,
		})
	})
}

// IdentityLink implements IdentityLinks.
func (p *Portable) IdentityLink(ctx context.Context, surface, chatUserID string) (IdentityLink, error) {
	if err := checkIdentity(surface, chatUserID); err != nil {
		return IdentityLink{}, err
	}
	l, err := p.d.IdentityLink(ctx, surface, chatUserID)
	if errors.Is(err, ErrNotFound) {
		return IdentityLink{}, fmt.Errorf("%w: %s account %q is not linked", ErrNotFound, surface, chatUserID)
	}
	return l, err
}

// ListIdentityLinks implements IdentityLinks.
func (p *Portable) ListIdentityLinks(ctx context.Context, f IdentityLinkFilter) ([]IdentityLink, error) {
	var err error
	if f.Limit, err = listLimit(f.Limit); err != nil {
		return nil, err
	}
	if err := checkTimePosition(f.After.CreatedAt, f.After.Surface); err != nil {
		return nil, err
	}
	return p.d.ListIdentityLinks(ctx, f)
}
