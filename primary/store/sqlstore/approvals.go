package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// InsertApproval implements store.Tx. The partial unique index on the key of pending
// approvals makes the insert a no-op when an identical request is pending, whoever saved it;
// the pending one is then read in the same transaction.
func (t *Tx) InsertApproval(ctx context.Context, a store.Approval) (int64, bool, error) {
	var id int64
	err := t.queryRow(ctx, `INSERT INTO approvals (key, kind, channel, thread, author, command, workdir,
		ceiling_ns, label, agent, worker_key, status, created_at, decided_by, decided_at, job_id, note, settled_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING RETURNING id`,
		a.Key, a.Kind, a.Channel, a.Thread, a.Author, a.Command, a.Workdir, int64(a.Ceiling), a.Label, a.Agent, a.WorkerKey,
		string(a.Status), nanos(a.CreatedAt), a.DecidedBy, nullNanos(a.DecidedAt), jobID(a.JobID), a.Note,
		nullNanos(a.SettledAt)).Scan(&id)
	switch {
	case err == nil:
		return id, true, nil
	case !errors.Is(err, sql.ErrNoRows):
		return 0, false, fmt.Errorf("store: save approval: %w", err)
	}
	if err := t.queryRow(ctx, `SELECT id FROM approvals WHERE key = ? AND status = 'pending'`, a.Key).Scan(&id); err != nil {
		return 0, false, fmt.Errorf("store: save approval: %w", err)
	}
	return id, false, nil
}

// UpdateApproval implements store.Tx.
func (t *Tx) UpdateApproval(ctx context.Context, prev, next store.Approval) (bool, error) {
	n, err := t.exec(ctx, "update approval", `UPDATE approvals SET status = ?, decided_by = ?, decided_at = ?, job_id = ?,
		note = ?, settled_at = ? WHERE id = ? AND status = ? AND job_id IS NOT DISTINCT FROM ?`,
		string(next.Status), next.DecidedBy, nullNanos(next.DecidedAt), jobID(next.JobID), next.Note,
		nullNanos(next.SettledAt), next.ID, string(prev.Status), jobID(prev.JobID))
	return n == 1, err
}

// QueueApprovalChange implements store.Tx: one compare-and-set on the state the change leaves
// (and, withJob, on a recorded job) that returns the approval as changed, the check that it
// changed, and the read of its comments, all queued, so a driver sends them together with
// what follows. Where statements are read one by one, the change's own result is the check.
func (t *Tx) QueueApprovalChange(ctx context.Context, id int64, from store.ApprovalStatus, withJob bool, c store.ApprovalChange) func() (store.Approval, error) {
	set, args := "status = ?", []any{string(c.Status)}
	if !c.DecidedAt.IsZero() {
		set, args = set+", decided_by = ?, decided_at = ?", append(args, c.DecidedBy, nanos(c.DecidedAt))
	}
	if !c.SettledAt.IsZero() {
		set, args = set+", note = ?, settled_at = ?", append(args, c.Note, nanos(c.SettledAt))
	}
	where := "id = ? AND status = ?"
	if withJob {
		where += " AND job_id IS NOT NULL"
	}
	args = append(args, id, string(from))
	var aps []store.Approval
	changed := t.c.Queue(ctx, func(rows Rows) (err error) {
		if aps, err = scanApprovals(rows); err == nil && len(aps) == 0 {
			err = store.ErrUnmatched
		}
		return err
	}, t.d.Bind(`UPDATE approvals SET `+set+` WHERE `+where+` RETURNING `+approvalReturned), args...)
	if here := t.d.ChangedHere(); here != "" {
		t.expect(ctx, `EXISTS (SELECT 1 FROM approvals WHERE id = ? AND `+here+`)`, id)
	}
	// The comments are read after the change, in the same transaction: those of the approval
	// as changed.
	var comments []store.ApprovalComment
	read := t.c.Queue(ctx, func(rows Rows) (err error) {
		comments, err = collect(rows, scanApprovalComment)
		return err
	}, t.d.Bind(`SELECT actor, text, at FROM approval_comments WHERE approval_id = ? ORDER BY id`), id)
	return func() (store.Approval, error) {
		if err := firstFailure(changed, read); err != nil {
			return store.Approval{}, fmt.Errorf("store: change approval %d: %w", id, err)
		}
		aps[0].Comments = comments
		return aps[0], nil
	}
}

func scanApprovalComment(row Row) (store.ApprovalComment, error) {
	var c store.ApprovalComment
	var at int64
	err := row.Scan(&c.Actor, &c.Text, &at)
	c.At = fromNanos(at)
	return c, err
}

// jobID is a job reference: NULL for none.
func jobID(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

// InsertApprovalComment implements store.Tx.
func (t *Tx) InsertApprovalComment(ctx context.Context, id int64, from store.ApprovalStatus, c store.ApprovalComment) (bool, error) {
	n, err := t.exec(ctx, "comment on approval", `INSERT INTO approval_comments (approval_id, actor, text, at)
		SELECT id, ?, ?, ? FROM approvals WHERE id = ? AND status = ?`, c.Actor, c.Text, nanos(c.At), id, string(from))
	return n == 1, err
}

// Approval implements store.Reader.
func (r Reader) Approval(ctx context.Context, id int64) (store.Approval, error) {
	var c conditions
	c.Add("id = ?", id)
	found, err := r.queryApprovals(ctx, c, 1)
	return only(found, err, "approval", id)
}

// ListApprovals implements store.Reader.
func (r Reader) ListApprovals(ctx context.Context, f store.ApprovalFilter) ([]store.Approval, error) {
	var c conditions
	c.Equal("status", string(f.Status))
	c.Conversation(f.Channel, f.Thread)
	c.BeforeID(f.BeforeID)
	return r.queryApprovals(ctx, c, f.Limit)
}

const approvalColumns = `a.id, a.key, a.kind, a.channel, a.thread, a.author, a.command, a.workdir, a.ceiling_ns, a.label,
	a.agent, a.worker_key, a.status, a.created_at, a.decided_by, a.decided_at, a.job_id, a.note, a.settled_at`

// approvalReturned is what a statement on the approvals table returns for scanApprovals: the
// approval's columns and no comment.
const approvalReturned = `id, key, kind, channel, thread, author, command, workdir, ceiling_ns, label,
	agent, worker_key, status, created_at, decided_by, decided_at, job_id, note, settled_at, NULL, NULL, NULL`

// approvalsWithComments reads the approvals of a statement's "a" (rows of the approvals
// table), newest first, each with its comments oldest first, as scanApprovals reads them.
const approvalsWithComments = `SELECT ` + approvalColumns + `, c.actor, c.text, c.at
	FROM a LEFT JOIN approval_comments c ON c.approval_id = a.id ORDER BY a.id DESC, c.id`

// queryApprovals returns up to limit approvals matching c (conditions on the approvals
// table), newest first, each with its comments oldest first. One statement reads both, so the
// comments belong to the same snapshot as the approvals and a page costs one query.
func (r Reader) queryApprovals(ctx context.Context, c conditions, limit int) ([]store.Approval, error) {
	rows, err := r.query(ctx, `WITH a AS (SELECT * FROM approvals WHERE `+c.SQL()+` ORDER BY id DESC LIMIT ?) `+
		approvalsWithComments, append(c.Args, r.limit(limit))...)
	if err != nil {
		return nil, fmt.Errorf("store: approvals: %w", err)
	}
	aps, err := scanApprovals(rows)
	if err != nil {
		return nil, fmt.Errorf("store: approvals: %w", err)
	}
	return aps, nil
}

// scanApprovals reads the rows of approvalsWithComments and closes them.
func scanApprovals(rows Rows) ([]store.Approval, error) {
	defer rows.Close()
	var out []store.Approval
	for rows.Next() {
		var ap store.Approval
		var ceiling, created int64
		var decided, job, settled, commentAt *int64
		var status string
		var actor, text *string
		if err := rows.Scan(&ap.ID, &ap.Key, &ap.Kind, &ap.Channel, &ap.Thread, &ap.Author, &ap.Command, &ap.Workdir,
			&ceiling, &ap.Label, &ap.Agent, &ap.WorkerKey, &status, &created, &ap.DecidedBy, &decided, &job, &ap.Note,
			&settled, &actor, &text, &commentAt); err != nil {
			return nil, err
		}
		if len(out) == 0 || out[len(out)-1].ID != ap.ID {
			ap.Ceiling = time.Duration(ceiling)
			ap.Status = store.ApprovalStatus(status)
			ap.CreatedAt = fromNanos(created)
			ap.DecidedAt = fromNullNanos(decided)
			if job != nil {
				ap.JobID = *job
			}
			ap.SettledAt = fromNullNanos(settled)
			out = append(out, ap)
		}
		if actor != nil {
			last := &out[len(out)-1]
			last.Comments = append(last.Comments, store.ApprovalComment{Actor: *actor, Text: *text, At: fromNullNanos(commentAt)})
		}
	}
	return out, rows.Err()
}
