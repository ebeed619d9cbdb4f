package memory

import (
	"context"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// QueueAudit implements store.Tx: written at once.
func (t *tx) QueueAudit(_ context.Context, e store.NewAuditEntry, at time.Time) func() (int64, error) {
	id := t.s.audit.insert(t, store.AuditEntry{
		ID: t.s.audit.nextID(), At: stamp(at), Actor: e.Actor, Action: e.Action, Subject: e.Subject, Detail: text(e.Detail),
	})
	return func() (int64, error) { return id, nil }
}

// ListAudit implements store.Reader.
func (v view) ListAudit(_ context.Context, f store.AuditFilter) ([]store.AuditEntry, error) {
	defer v.read()()
	return newestFirst(&v.s.audit, f.BeforeID, f.Limit, func(e *store.AuditEntry) bool {
		return equalOrAny(e.Actor, f.Actor) && equalOrAny(e.Action, f.Action) && equalOrAny(e.Subject, f.Subject)
	}, func(e *store.AuditEntry) store.AuditEntry {
		c := *e
		c.Detail = text(e.Detail)
		return c
	}), nil
}
