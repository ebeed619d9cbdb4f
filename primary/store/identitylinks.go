package store

import (
	"context"
	"net/url"
	"time"

	"github.com/turncli/turncli/internal/fieldrule"
)

// IdentityLinks keeps which person each chat account is: a runtime relays a decision made by
// an account on a chat surface, and the link names the person (a requester id or an operator
// name) the decision is taken as. One account is linked to exactly one person; a person may
// have several accounts.
type IdentityLinks interface {
	// LinkIdentity links the account to l.Person, replacing the account's link when it has
	// one (replaced is then true), and appends its audit entry (ActionIdentityLink) in the
	// same transaction.
	LinkIdentity(ctx context.Context, l NewIdentityLink, actor string) (link IdentityLink, replaced bool, err error)
	// UnlinkIdentity removes the account's link and appends its audit entry
	// (ActionIdentityUnlink) in the same transaction; ErrNotFound when it has none.
	UnlinkIdentity(ctx context.Context, surface, chatUserID, actor string) error
	// IdentityLink returns the account's link; ErrNotFound when it has none.
	IdentityLink(ctx context.Context, surface, chatUserID string) (IdentityLink, error)
	// ListIdentityLinks returns the links matching f, in IdentityLinkPosition's order.
	ListIdentityLinks(ctx context.Context, f IdentityLinkFilter) ([]IdentityLink, error)
}

// NewIdentityLink is a link to make: the account (Surface, ChatUserID) and its person, each
// as fieldrule's kind of the same name allows.
type NewIdentityLink struct {
	Surface    string
	ChatUserID string
	Person     string
}

// IdentityLink is a stored link and who made it when.
type IdentityLink struct {
	Surface    string
	ChatUserID string
	Person     string
	CreatedBy  string
	CreatedAt  time.Time
}

// IdentityLinkFilter selects identity links; empty fields match every link.
type IdentityLinkFilter struct {
	Surface string
	Person  string
	// After, when set, returns only the links after it in the list's order: the position of
	// the last link of the previous page.
	After IdentityLinkPosition
	// Limit is at most 1000; zero means 100.
	Limit int
}

// IdentityLinkPosition is a link's place in ListIdentityLinks's order: most recently linked
// first, then by surface and chat user id (its key). Linking an account again moves it to the
// front.
type IdentityLinkPosition struct {
	CreatedAt           time.Time
	Surface, ChatUserID string
}

// Audit actions of identity links.
const (
	// ActionIdentityLink: detail {"surface","chat_user_id","person","previous"}; previous is
	// the person the account was linked to before, empty when it had no link.
	ActionIdentityLink = "identity.link"
	// ActionIdentityUnlink: detail {"surface","chat_user_id","person"}, and "reason" when the
	// primary removed the link with its operator.
	ActionIdentityUnlink = "identity.unlink"
)

// IdentitySubject is the audit subject of a chat account.
func IdentitySubject(surface, chatUserID string) string {
	return "identity/" + url.PathEscape(surface) + "/" + url.PathEscape(chatUserID)
}

// checkIdentity applies fieldrule's rules to an account's surface and chat user id.
func checkIdentity(surface, chatUserID string) error {
	if err := fieldrule.Check(fieldrule.Surface, "surface", surface); err != nil {
		return invalid("%v", err)
	}
	if err := fieldrule.Check(fieldrule.ChatUserID, "chat user id", chatUserID); err != nil {
		return invalid("%v", err)
	}
	return nil
}
