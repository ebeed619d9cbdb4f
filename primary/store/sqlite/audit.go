package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// AppendAudit implements store.AuditLog.
func (s *Store) AppendAudit(ctx context.Context, e store.NewAuditEntry) (id int64, err error) {
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		id, err = insertAudit(ctx, tx, e, s.now())
		return err
	})
	return id, err
}

// insertAudit appends e inside tx; its detail is stored compacted.
func insertAudit(ctx context.Context, tx *sql.Tx, e store.NewAuditEntry, now time.Time) (int64, error) {
	if e.Actor == "" || e.Action == "" {
		return 0, invalid("an audit entry needs an actor and an action")
	}
	detail := []byte("{}")
	if len(bytes.TrimSpace(e.Detail)) > 0 {
		var buf bytes.Buffer
		if err := json.Compact(&buf, e.Detail); err != nil || buf.Bytes()[0] != '{' {
			return 0, invalid("an audit detail must be a JSON object")
		}
		detail = buf.Bytes()
	}
	var id int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO audit_log (at, actor, action, subject, detail)
		VALUES (?, ?, ?, ?, ?) RETURNING id`, nanos(now), e.Actor, e.Action, e.Subject, string(detail)).Scan(&id); err != nil {
		return 0, fmt.Errorf("store: append audit: %w", err)
	}
	return id, nil
}

// ListAudit implements store.AuditLog.
func (s *Store) ListAudit(ctx context.Context, f store.AuditFilter) ([]store.AuditEntry, error) {
	limit, err := listLimit(f.Limit)
	if err != nil {
		return nil, err
	}
	var c conditions
	c.equal("actor", f.Actor)
	c.equal("action", f.Action)
	c.equal("subject", f.Subject)
	if f.BeforeID > 0 {
		c.add("id < ?", f.BeforeID)
	}
	rows, err := s.read.QueryContext(ctx, `SELECT id, at, actor, action, subject, detail FROM audit_log
		WHERE `+c.sql()+` ORDER BY id DESC LIMIT ?`, append(c.args, limit)...)
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
