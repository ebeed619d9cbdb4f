package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// The execution side of an approval: the job it starts, and how an executing approval ends
// (settled by the primary once it knows, or recovered at boot). Nothing here re-runs anything.

// SettleApproval implements store.Approvals.
func (s *Store) SettleApproval(ctx context.Context, id int64, to store.ApprovalStatus, note string, tell ...store.NewContinuation) (store.Approval, error) {
	if to != store.ApprovalConsumed && to != store.ApprovalFailed {
		return store.Approval{}, invalid("an approval settles as consumed or failed, not %q", to)
	}
	if err := validText("a note", note, 0); err != nil {
		return store.Approval{}, err
	}
	var out store.Approval
	err := s.inTx(ctx, func(tx *sql.Tx) (err error) {
		out, err = settle(ctx, tx, id, to, note, s.now(), tell...)
		return err
	})
	return out, err
}

// RecoverApprovals implements store.Approvals.
func (s *Store) RecoverApprovals(ctx context.Context) ([]store.Approval, error) {
	var out []store.Approval
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id, job_id IS NOT NULL FROM approvals WHERE status = 'executing' ORDER BY id`)
		if err != nil {
			return fmt.Errorf("store: recover approvals: %w", err)
		}
		type found struct {
			id     int64
			hasJob bool
		}
		var executing []found
		for rows.Next() {
			var f found
			if err := rows.Scan(&f.id, &f.hasJob); err != nil {
				rows.Close()
				return fmt.Errorf("store: recover approvals: %w", err)
			}
			executing = append(executing, f)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("store: recover approvals: %w", err)
		}
		now := s.now()
		for _, f := range executing {
			to, note := store.ApprovalConsumed, ""
			if !f.hasJob {
				to, note = store.ApprovalFailed, store.ApprovalRestartNote
			}
			ap, err := settle(ctx, tx, f.id, to, note, now)
			if err != nil {
				return err
			}
			out = append(out, ap)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// settle moves executing approval id to consumed (only with a job) or failed, with its audit
// entry, inside tx.
func settle(ctx context.Context, tx *sql.Tx, id int64, to store.ApprovalStatus, note string, now time.Time, tell ...store.NewContinuation) (store.Approval, error) {
	return transitionIn(ctx, tx, id, "settle", now, func(tx *sql.Tx, now time.Time) (sql.Result, error) {
		return tx.ExecContext(ctx, `UPDATE approvals SET status = ?, note = ?, settled_at = ?
			WHERE id = ? AND status = 'executing' AND (? = 'failed' OR job_id IS NOT NULL)`,
			string(to), note, nanos(now), id, string(to))
	}, func(ap store.Approval) (store.NewAuditEntry, error) {
		if to == store.ApprovalConsumed {
			return auditEntry(primaryActor, store.ActionApprovalConsume, id, map[string]any{"job": ap.JobID})
		}
		return auditEntry(primaryActor, store.ActionApprovalFail, id, map[string]any{"note": note})
	}, tell...)
}

// CreateApprovedJob implements store.Approvals: the job goes through createJob, the same cap
// check and insert as CreateJob, and is linked to the approval in the same transaction.
func (s *Store) CreateApprovedJob(ctx context.Context, approvalID int64, j store.NewJob, caps store.JobCaps) (store.Job, error) {
	if err := validJob(j); err != nil {
		return store.Job{}, err
	}
	var out store.Job
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		ap, err := approvalIn(ctx, tx, approvalID)
		if err != nil {
			return err
		}
		if ap.Status != store.ApprovalExecuting || ap.JobID != 0 {
			return conflict(approvalID, ap.Status, ap.JobID != 0, "start a job for")
		}
		if j.Kind != ap.Kind || j.Channel != ap.Channel || j.Thread != ap.Thread || j.Author != ap.Author ||
			j.Command != ap.Command || j.Ceiling != ap.Ceiling {
			return invalid("the job differs from what approval %d approved", approvalID)
		}
		if out, err = createJob(ctx, tx, j, caps, s.now()); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE approvals SET job_id = ? WHERE id = ? AND status = 'executing' AND job_id IS NULL`,
			out.ID, approvalID)
		if err != nil {
			return fmt.Errorf("store: link approved job: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("store: link approved job: %w", err)
		} else if n != 1 {
			return fmt.Errorf("store: link approved job: approval %d changed meanwhile", approvalID)
		}
		return nil
	})
	if err != nil {
		return store.Job{}, err
	}
	return out, nil
}
