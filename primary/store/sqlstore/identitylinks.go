package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/turncli/turncli/primary/store"
)

const identityLinkColumns = `surface, chat_user_id, person, created_by, created_at`

func scanIdentityLink(row Row) (store.IdentityLink, error) {
	var l store.IdentityLink
	var created int64
	err := row.Scan(&l.Surface, &l.ChatUserID, &l.Person, &l.CreatedBy, &created)
	l.CreatedAt = fromNanos(created)
	return l, err
}

// IdentityLink implements store.Reader.
func (r Reader) IdentityLink(ctx context.Context, surface, chatUserID string) (store.IdentityLink, error) {
	l, err := scanIdentityLink(r.queryRow(ctx, `SELECT `+identityLinkColumns+` FROM identity_links
		WHERE surface = ? AND chat_user_id = ?`, surface, chatUserID))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.IdentityLink{}, fmt.Errorf("%w: identity link", store.ErrNotFound)
	case err != nil:
		return store.IdentityLink{}, fmt.Errorf("store: identity link: %w", err)
	}
	return l, nil
}

// ListIdentityLinks implements store.Reader.
func (r Reader) ListIdentityLinks(ctx context.Context, f store.IdentityLinkFilter) ([]store.IdentityLink, error) {
	var c conditions
	c.Equal("surface", f.Surface)
	c.Equal("person", f.Person)
	c.AfterTime("created_at", f.After.CreatedAt, []string{"surface", "chat_user_id"}, []any{f.After.Surface, f.After.ChatUserID})
	rows, err := r.query(ctx, `SELECT `+identityLinkColumns+` FROM identity_links WHERE `+c.SQL()+`
		ORDER BY created_at DESC, surface, chat_user_id LIMIT ?`, append(c.Args, r.limit(f.Limit))...)
	if err != nil {
		return nil, fmt.Errorf("store: identity links: %w", err)
	}
	out, err := collect(rows, scanIdentityLink)
	if err != nil {
		return nil, fmt.Errorf("store: identity links: %w", err)
	}
	return out, nil
}

// PutIdentityLink implements store.Tx.
func (t *Tx) PutIdentityLink(ctx context.Context, l store.IdentityLink) error {
	_, err := t.exec(ctx, "link identity", `INSERT INTO identity_links (`+identityLinkColumns+`)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (surface, chat_user_id) DO UPDATE
		SET person = excluded.person, created_by = excluded.created_by, created_at = excluded.created_at`,
		l.Surface, l.ChatUserID, l.Person, l.CreatedBy, nanos(l.CreatedAt))
	return err
}

// DeleteIdentityLinksOf implements store.Tx.
func (t *Tx) DeleteIdentityLinksOf(ctx context.Context, person string) ([]store.IdentityLink, error) {
	rows, err := t.query(ctx, `DELETE FROM identity_links WHERE person = ? RETURNING `+identityLinkColumns, person)
	if err != nil {
		return nil, fmt.Errorf("store: unlink identities: %w", err)
	}
	gone, err := collect(rows, scanIdentityLink)
	if err != nil {
		return nil, fmt.Errorf("store: unlink identities: %w", err)
	}
	return gone, nil
}

// DeleteIdentityLink implements store.Tx.
func (t *Tx) DeleteIdentityLink(ctx context.Context, surface, chatUserID string) (store.IdentityLink, error) {
	gone, err := scanIdentityLink(t.queryRow(ctx, `DELETE FROM identity_links
		WHERE surface = ? AND chat_user_id = ? RETURNING `+identityLinkColumns, surface, chatUserID))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.IdentityLink{}, fmt.Errorf("%w: identity link", store.ErrNotFound)
	case err != nil:
		return store.IdentityLink{}, fmt.Errorf("store: unlink identity: %w", err)
	}
	return gone, nil
}
