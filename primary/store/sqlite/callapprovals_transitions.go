package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/turncli/turncli/primary/store"
)

// Each transition is one transaction: an UPDATE that matches only the state the transition
// needs (the compare-and-swap), then the audit entry and the continuations, so a lost race
// writes nothing.

// ApproveCallApproval implements store.CallApprovals.
func (s *Store) ApproveCallApproval(ctx context.Context, id int64, actor string) (store.CallApproval, error) {
	if actor == "" {
		return store.CallApproval{}, invalid("an approval needs an actor")
	}
	return s.callTransition(ctx, id, "approve", store.CallApprovalWaiting, func(tx *sql.Tx, now time.Time) (sql.Result, error) {
		return tx.ExecContext(ctx, `UPDATE call_approvals SET status = 'approved', decided_by = ?, decided_at = ?
			WHERE id = ? AND status = 'waiting'`, actor, nanos(now), id)
	}, actor, store.ActionCallApprovalApprove, nil)
}

// DenyCallApproval implements store.CallApprovals.
func (s *Store) DenyCallApproval(ctx context.Context, id int64, actor, note string, tell ...store.NewContinuation) (store.CallApproval, error) {
	if actor == "" {
		return store.CallApproval{}, invalid("a denial needs an actor")
	}
	if err := validText("a note", note, 0); err != nil {
		return store.CallApproval{}, err
	}
	return s.callTransition(ctx, id, "deny", store.CallApprovalWaiting, func(tx *sql.Tx, now time.Time) (sql.Result, error) {
		return tx.ExecContext(ctx, `UPDATE call_approvals SET status = 'denied', decided_by = ?, decided_at = ?, note = ?,
			settled_at = ? WHERE id = ? AND status = 'waiting'`, actor, nanos(now), note, nanos(now), id)
	}, actor, store.ActionCallApprovalDeny, map[string]any{"note": note}, tell...)
}

// ClaimCallApproval implements store.CallApprovals.
func (s *Store) ClaimCallApproval(ctx context.Context, id int64) (store.CallApproval, error) {
	return s.callTransition(ctx, id, "claim", store.CallApprovalApproved, func(tx *sql.Tx, now time.Time) (sql.Result, error) {
		return tx.ExecContext(ctx, `UPDATE call_approvals SET status = 'claimed', claimed_at = ?
			WHERE id = ? AND status = 'approved'`, nanos(now), id)
	}, primaryActor, store.ActionCallApprovalClaim, nil)
}

// FinishCallApproval implements store.CallApprovals.
func (s *Store) FinishCallApproval(ctx context.Context, id int64, to store.CallApprovalStatus, res store.CallResult, tell ...store.NewContinuation) (store.CallApproval, error) {
	if to != store.CallApprovalDone && to != store.CallApprovalInterrupted {
		return store.CallApproval{}, invalid("a claimed call ends done or interrupted, not %q", to)
	}
	switch res.Status {
	case "completed", "failed", "cancelled":
	default:
		return store.CallApproval{}, invalid("a call result's status must be completed, failed or cancelled, not %q", res.Status)
	}
	if len(res.Outcome) > store.MaxCallOutcome || !utf8.ValidString(res.Outcome) {
		return store.CallApproval{}, invalid("a call outcome must be UTF-8 of at most %d bytes", store.MaxCallOutcome)
	}
	return s.callTransition(ctx, id, "finish", store.CallApprovalClaimed, func(tx *sql.Tx, now time.Time) (sql.Result, error) {
		return tx.ExecContext(ctx, `UPDATE call_approvals SET status = ?, result_status = ?, outcome = ?, settled_at = ?
			WHERE id = ? AND status = 'claimed'`, string(to), res.Status, res.Outcome, nanos(now), id)
	}, primaryActor, store.ActionCallApprovalFinish, map[string]any{"status": string(to), "result": res.Status}, tell...)
}

// callTransition runs change, which matches record id only in state from, then appends the
// audit entry and enqueues tell, in one transaction. When change matched nothing it returns
// ErrNotFound or ErrConflict and writes nothing.
func (s *Store) callTransition(ctx context.Context, id int64, verb string, from store.CallApprovalStatus,
	change func(*sql.Tx, time.Time) (sql.Result, error), actor, action string, detail map[string]any,
	tell ...store.NewContinuation,
) (store.CallApproval, error) {
	var out store.CallApproval
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		now := s.now()
		res, err := change(tx, now)
		if err != nil {
			return fmt.Errorf("store: %s call approval %d: %w", verb, id, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("store: %s call approval %d: %w", verb, id, err)
		}
		c, err := callApprovalIn(ctx, tx, id)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("%w: cannot %s call approval %d: it is %s, not %s", store.ErrConflict, verb, id, c.Status, from)
		}
		e, err := callAuditEntry(actor, action, id, c.CallID, detail)
		if err != nil {
			return err
		}
		if _, err := insertAudit(ctx, tx, e, now); err != nil {
			return err
		}
		for _, t := range tell {
			if _, _, err := insertContinuation(ctx, tx, t, now); err != nil {
				return err
			}
		}
		out = c
		return nil
	})
	return out, err
}

// callAuditEntry is a call approval's audit entry; detail gets the record's and call's ids.
func callAuditEntry(actor, action string, id int64, callID string, detail map[string]any) (store.NewAuditEntry, error) {
	d := map[string]any{"call_approval": id, "call_id": callID}
	for k, v := range detail {
		d[k] = v
	}
	b, err := json.Marshal(d)
	if err != nil {
		return store.NewAuditEntry{}, fmt.Errorf("store: audit detail: %w", err)
	}
	return store.NewAuditEntry{Actor: actor, Action: action, Subject: store.CallApprovalSubject(id), Detail: b}, nil
}
