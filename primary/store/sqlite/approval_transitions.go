package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// Each transition is one transaction: a statement that changes the approval only when it is in
// the state the transition needs (the compare-and-swap), then the audit entry, so a lost race
// writes neither.

// primaryActor is the audit actor of what the primary does by itself.
const primaryActor = "primary"

// BeginApproval implements store.Approvals.
func (s *Store) BeginApproval(ctx context.Context, id int64, actor string) (store.Approval, error) {
	if actor == "" {
		return store.Approval{}, invalid("an approval needs an actor")
	}
	return s.transition(ctx, id, "approve", func(tx *sql.Tx, now time.Time) (sql.Result, error) {
		return tx.ExecContext(ctx, `UPDATE approvals SET status = 'executing', decided_by = ?, decided_at = ?
			WHERE id = ? AND status = 'pending'`, actor, nanos(now), id)
	}, func(store.Approval) (store.NewAuditEntry, error) {
		return auditEntry(actor, store.ActionApprovalApprove, id, nil)
	})
}

// DenyApproval implements store.Approvals.
func (s *Store) DenyApproval(ctx context.Context, id int64, actor, reason string, tell ...store.NewContinuation) (store.Approval, error) {
	if actor == "" {
		return store.Approval{}, invalid("a denial needs an actor")
	}
	if err := validText("a deny reason", reason, 0); err != nil {
		return store.Approval{}, err
	}
	return s.transition(ctx, id, "deny", func(tx *sql.Tx, now time.Time) (sql.Result, error) {
		return tx.ExecContext(ctx, `UPDATE approvals SET status = 'denied', decided_by = ?, decided_at = ?, note = ?,
			settled_at = ? WHERE id = ? AND status = 'pending'`, actor, nanos(now), reason, nanos(now), id)
	}, func(store.Approval) (store.NewAuditEntry, error) {
		return auditEntry(actor, store.ActionApprovalDeny, id, map[string]any{"reason": reason})
	}, tell...)
}

// CommentApproval implements store.Approvals.
func (s *Store) CommentApproval(ctx context.Context, id int64, actor, text string, tell ...store.NewContinuation) (store.Approval, error) {
	if actor == "" {
		return store.Approval{}, invalid("a comment needs an actor")
	}
	if err := validText("a comment", text, 1); err != nil {
		return store.Approval{}, err
	}
	return s.transition(ctx, id, "comment on", func(tx *sql.Tx, now time.Time) (sql.Result, error) {
		return tx.ExecContext(ctx, `INSERT INTO approval_comments (approval_id, actor, text, at)
			SELECT id, ?, ?, ? FROM approvals WHERE id = ? AND status = 'pending'`, actor, text, nanos(now), id)
	}, func(store.Approval) (store.NewAuditEntry, error) {
		return auditEntry(actor, store.ActionApprovalComment, id, map[string]any{"comment": text})
	}, tell...)
}

// transition runs one transition in its own transaction; see transitionIn.
func (s *Store) transition(ctx context.Context, id int64, verb string,
	change func(*sql.Tx, time.Time) (sql.Result, error), entry func(store.Approval) (store.NewAuditEntry, error),
	tell ...store.NewContinuation,
) (store.Approval, error) {
	var out store.Approval
	err := s.inTx(ctx, func(tx *sql.Tx) (err error) {
		out, err = transitionIn(ctx, tx, id, verb, s.now(), change, entry, tell...)
		return err
	})
	return out, err
}

// transitionIn runs change, a statement on approval id that matches only the state the
// transition needs, then appends entry (made from the changed approval) and enqueues the
// continuations in tell, and returns the approval. When change matched nothing it returns
// ErrNotFound or ErrConflict and writes nothing more.
func transitionIn(ctx context.Context, tx *sql.Tx, id int64, verb string, now time.Time,
	change func(*sql.Tx, time.Time) (sql.Result, error), entry func(store.Approval) (store.NewAuditEntry, error),
	tell ...store.NewContinuation,
) (store.Approval, error) {
	res, err := change(tx, now)
	if err != nil {
		return store.Approval{}, fmt.Errorf("store: %s approval %d: %w", verb, id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return store.Approval{}, fmt.Errorf("store: %s approval %d: %w", verb, id, err)
	}
	ap, err := approvalIn(ctx, tx, id)
	if err != nil {
		return store.Approval{}, err
	}
	if n == 0 {
		return store.Approval{}, conflict(id, ap.Status, ap.JobID != 0, verb)
	}
	e, err := entry(ap)
	if err != nil {
		return store.Approval{}, err
	}
	if _, err := insertAudit(ctx, tx, e, now); err != nil {
		return store.Approval{}, err
	}
	for _, c := range tell {
		if _, _, err := insertContinuation(ctx, tx, c, now); err != nil {
			return store.Approval{}, err
		}
	}
	return ap, nil
}

func conflict(id int64, status store.ApprovalStatus, hasJob bool, verb string) error {
	state := string(status)
	switch {
	case status == store.ApprovalExecuting && hasJob:
		state += " with a job"
	case status == store.ApprovalExecuting:
		state += " without a job"
	}
	return fmt.Errorf("%w: cannot %s approval %d: it is %s", store.ErrConflict, verb, id, state)
}

// auditEntry is an approval's audit entry; detail gets the approval's id added.
func auditEntry(actor, action string, id int64, detail map[string]any) (store.NewAuditEntry, error) {
	if detail == nil {
		detail = map[string]any{}
	}
	detail["approval"] = id
	b, err := json.Marshal(detail)
	if err != nil {
		return store.NewAuditEntry{}, fmt.Errorf("store: audit detail: %w", err)
	}
	return store.NewAuditEntry{Actor: actor, Action: action, Subject: store.ApprovalSubject(id), Detail: b}, nil
}
