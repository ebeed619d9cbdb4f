package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/turncli/turncli/primary/store"
)

// SaveApproval implements store.Approvals. The partial unique index on the key of pending
// approvals makes the insert a no-op when an identical request is pending, whoever saved it.
func (s *Store) SaveApproval(ctx context.Context, a store.NewApproval) (ap store.Approval, created bool, err error) {
	switch {
	case a.Kind != "command":
		return store.Approval{}, false, invalid("approval kind must be command, not %q", a.Kind)
	case a.Channel == "":
		return store.Approval{}, false, invalid("an approval needs a channel")
	case a.Command == "":
		return store.Approval{}, false, invalid("an approval needs a command")
	case a.Workdir == "":
		return store.Approval{}, false, invalid("an approval needs a workdir")
	case a.Ceiling < 0:
		return store.Approval{}, false, invalid("an approval's ceiling cannot be negative")
	}
	key := a.Key()
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, `INSERT INTO approvals (key, kind, channel, thread, author, command, workdir,
			ceiling_ns, label, agent, worker_key, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?)
			ON CONFLICT DO NOTHING RETURNING id`,
			key, a.Kind, a.Channel, a.Thread, a.Author, a.Command, a.Workdir, int64(a.Ceiling), a.Label, a.Agent, a.WorkerKey,
			nanos(s.now())).Scan(&id)
		switch {
		case err == nil:
			created = true
		case errors.Is(err, sql.ErrNoRows):
			if err := tx.QueryRowContext(ctx, `SELECT id FROM approvals WHERE key = ? AND status = 'pending'`, key).Scan(&id); err != nil {
				return fmt.Errorf("store: save approval: %w", err)
			}
		default:
			return fmt.Errorf("store: save approval: %w", err)
		}
		ap, err = approvalIn(ctx, tx, id)
		return err
	})
	if err != nil {
		return store.Approval{}, false, err
	}
	return ap, created, nil
}

// Approval implements store.Approvals.
func (s *Store) Approval(ctx context.Context, id int64) (store.Approval, error) {
	return approvalIn(ctx, s.read, id)
}

// ListApprovals implements store.Approvals.
func (s *Store) ListApprovals(ctx context.Context, f store.ApprovalFilter) ([]store.Approval, error) {
	limit, err := listLimit(f.Limit)
	if err != nil {
		return nil, err
	}
	if f.Status != "" && !validApprovalStatus(f.Status) {
		return nil, invalid("approval status %q is unknown", f.Status)
	}
	var c conditions
	c.equal("status", string(f.Status))
	c.conversation(f.Channel, f.Thread)
	return queryApprovals(ctx, s.read, c.sql(), c.args, limit)
}

func validApprovalStatus(st store.ApprovalStatus) bool {
	switch st {
	case store.ApprovalPending, store.ApprovalExecuting, store.ApprovalConsumed, store.ApprovalFailed, store.ApprovalDenied:
		return true
	}
	return false
}

// validText checks a comment, deny reason or note: valid UTF-8 of least..MaxApprovalComment
// bytes.
func validText(what, text string, least int) error {
	if len(text) < least || len(text) > store.MaxApprovalComment || !utf8.ValidString(text) {
		return invalid("%s must be %d..%d bytes of UTF-8", what, least, store.MaxApprovalComment)
	}
	return nil
}

// querier is a read pool or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// approvalIn returns approval id read through q; ErrNotFound when it does not exist.
func approvalIn(ctx context.Context, q querier, id int64) (store.Approval, error) {
	aps, err := queryApprovals(ctx, q, "id = ?", []any{id}, 1)
	if err != nil {
		return store.Approval{}, err
	}
	if len(aps) == 0 {
		return store.Approval{}, fmt.Errorf("%w: approval %d", store.ErrNotFound, id)
	}
	return aps[0], nil
}

const approvalColumns = `a.id, a.key, a.kind, a.channel, a.thread, a.author, a.command, a.workdir, a.ceiling_ns, a.label,
	a.agent, a.worker_key, a.status, a.created_at, a.decided_by, a.decided_at, a.job_id, a.note, a.settled_at`

// queryApprovals returns up to limit approvals matching where (a condition on the approvals
// table), newest first, each with its comments oldest first. One statement reads both, so the
// comments belong to the same snapshot as the approvals.
func queryApprovals(ctx context.Context, q querier, where string, args []any, limit int) ([]store.Approval, error) {
	rows, err := q.QueryContext(ctx, `WITH a AS (SELECT * FROM approvals WHERE `+where+` ORDER BY id DESC LIMIT ?)
		SELECT `+approvalColumns+`, c.actor, c.text, c.at FROM a LEFT JOIN approval_comments c ON c.approval_id = a.id
		ORDER BY a.id DESC, c.id`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("store: approvals: %w", err)
	}
	defer rows.Close()
	var out []store.Approval
	for rows.Next() {
		var ap store.Approval
		var ceiling, created int64
		var decided, job, settled, commentAt sql.NullInt64
		var status string
		var actor, text sql.NullString
		if err := rows.Scan(&ap.ID, &ap.Key, &ap.Kind, &ap.Channel, &ap.Thread, &ap.Author, &ap.Command, &ap.Workdir,
			&ceiling, &ap.Label, &ap.Agent, &ap.WorkerKey, &status, &created, &ap.DecidedBy, &decided, &job, &ap.Note,
			&settled, &actor, &text, &commentAt); err != nil {
			return nil, fmt.Errorf("store: approvals: %w", err)
		}
		if len(out) == 0 || out[len(out)-1].ID != ap.ID {
			ap.Ceiling = time.Duration(ceiling)
			ap.Status = store.ApprovalStatus(status)
			ap.CreatedAt = fromNanos(created)
			if decided.Valid {
				ap.DecidedAt = fromNanos(decided.Int64)
			}
			ap.JobID = job.Int64
			if settled.Valid {
				ap.SettledAt = fromNanos(settled.Int64)
			}
			out = append(out, ap)
		}
		if actor.Valid {
			last := &out[len(out)-1]
			last.Comments = append(last.Comments, store.ApprovalComment{Actor: actor.String, Text: text.String, At: fromNanos(commentAt.Int64)})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: approvals: %w", err)
	}
	return out, nil
}
