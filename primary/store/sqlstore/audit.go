package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// QueueAudit implements store.Tx.
func (t *Tx) QueueAudit(ctx context.Context, e store.NewAuditEntry, at time.Time) func() (int64, error) {
	var id int64
	wait := t.c.Queue(ctx, func(rows Rows) error {
		ids, err := collect(rows, scanID)
		if err == nil && len(ids) == 1 {
			id = ids[0]
		}
		return err
	}, t.d.Bind(`INSERT INTO audit_log (at, actor, action, subject, detail) VALUES (?, ?, ?, ?, ?) RETURNING id`),
		nanos(at), e.Actor, e.Action, e.Subject, string(e.Detail))
	return func() (int64, error) {
		if err := wait(); err != nil {
			return 0, fmt.Errorf("store: append audit: %w", err)
		}
		return id, nil
	}
}

// ListAudit implements store.Reader.
func (r Reader) ListAudit(ctx context.Context, f store.AuditFilter) ([]store.AuditEntry, error) {
	var c conditions
	c.Equal("actor", f.Actor)
	c.Equal("action", f.Action)
	c.Equal("subject", f.Subject)
	c.BeforeID(f.BeforeID)
	rows, err := r.query(ctx, `SELECT id, at, actor, action, subject, detail FROM audit_log
		WHERE `+c.SQL()+` ORDER BY id DESC LIMIT ?`, append(c.Args, r.limit(f.Limit))...)
	if err != nil {
		return nil, fmt.Errorf("store: list audit: %w", err)
	}
	out, err := collect(rows, func(row Row) (store.AuditEntry, error) {
		var e store.AuditEntry
		var at int64
		var detail string
		err := row.Scan(&e.ID, &at, &e.Actor, &e.Action, &e.Subject, &detail)
		e.At, e.Detail = fromNanos(at), json.RawMessage(detail)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: list audit: %w", err)
	}
	return out, nil
}
