package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
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
	switch {
	case f.Limit == 0:
		f.Limit = 100
	case f.Limit < 0 || f.Limit > 1000:
		return nil, invalid("limit must be 1..1000")
	}
	var where []string
	var args []any
	for _, c := range []struct {
		column, value string
	}{{"actor", f.Actor}, {"action", f.Action}, {"subject", f.Subject}} {
		if c.value != "" {
			where = append(where, c.column+" = ?")
			args = append(args, c.value)
		}
	}
	if f.BeforeID > 0 {
		where = append(where, "id < ?")
		args = append(args, f.BeforeID)
	}
	query := `SELECT id, at, actor, action, subject, detail FROM audit_log`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY id DESC LIMIT ?"
	rows, err := s.read.QueryContext(ctx, query, append(args, f.Limit)...)
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
