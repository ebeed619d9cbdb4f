package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// InsertAudit implements store.Tx.
func (t *tx) InsertAudit(ctx context.Context, e store.NewAuditEntry, at time.Time) (int64, error) {
	var id int64
	if err := t.tx.QueryRowContext(ctx, `INSERT INTO audit_log (at, actor, action, subject, detail)
		VALUES (?, ?, ?, ?, ?) RETURNING id`, nanos(at), e.Actor, e.Action, e.Subject, string(e.Detail)).Scan(&id); err != nil {
		return 0, fmt.Errorf("store: append audit: %w", err)
	}
	return id, nil
}

// ListAudit implements store.Reader.
func (r reader) ListAudit(ctx context.Context, f store.AuditFilter) ([]store.AuditEntry, error) {
	var c conditions
	c.Equal("actor", f.Actor)
	c.Equal("action", f.Action)
	c.Equal("subject", f.Subject)
	c.BeforeID(f.BeforeID)
	rows, err := r.q.QueryContext(ctx, `SELECT id, at, actor, action, subject, detail FROM audit_log
		WHERE `+c.SQL()+` ORDER BY id DESC LIMIT ?`, append(c.Args, sqlLimit(f.Limit))...)
	if err != nil {
		return nil, fmt.Errorf("store: list audit: %w", err)
	}
	defer rows.Close()
	var out []store.AuditEntry
	for rows.Next() {
		var e store.AuditEntry
		var at int64
		var detail string
		if err := rows.Scan(&e.ID, &at, &e.Actor, &e.Action, &e.Subject, &detail); err != nil {
			return nil, fmt.Errorf("store: list audit: %w", err)
		}
		e.At, e.Detail = fromNanos(at), json.RawMessage(detail)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list audit: %w", err)
	}
	return out, nil
}
