package response

import (
	"context"
	"errors"

	"github.com/turncli/turncli/primary/store"
)

// Expiry of calls nobody decided: a waiting call approval older than
// Settings.CallApprovalExpiry expires. The call waiting on it sets a timer of its own; the
// sweep finds the others (their response ended, or the primary restarted since) and any the
// timer could not write.

// KindCallApprovalExpired is the live feed kind of a call approval that expired (subject
// store.CallApprovalSubject).
const KindCallApprovalExpired = "call_approval.expired"

// expire ends waiting record id as expired, then hands it to the call waiting on it, like a
// decision; when none waits, the expiry and the continuation that tells the conversation
// commit together. store.ErrConflict when the record was decided (or expired) first: that
// decision stands.
func (c *CallApprovals) expire(ctx context.Context, id int64) (store.CallApproval, error) {
	rec, err := c.endUnrun(ctx, id, KindCallApprovalExpired,
		func(cur *store.CallApproval) { cur.Status = store.CallApprovalExpired },
		func(tell []store.NewContinuation) (store.CallApproval, error) {
			return c.cfg.Store.ExpireCallApproval(ctx, id, tell...)
		})
	if err != nil {
		return store.CallApproval{}, err
	}
	c.cfg.Logger.Info("call approval expired", callLogAttrs(rec)...)
	return rec, nil
}

// sweepPage is how many waiting records one read of a sweep takes.
const sweepPage = 1000

// ExpireOverdue expires every waiting call approval created Settings.CallApprovalExpiry or
// longer ago (as the manager's clock tells) and returns how many it expired. A record decided
// meanwhile is left to its decision.
func (c *CallApprovals) ExpireOverdue(ctx context.Context) (int, error) {
	cutoff := c.mgr.cfg.Clock.Now().Add(-c.mgr.cfg.Settings.CallApprovalExpiry)
	expired := 0
	for before := int64(0); ; {
		page, err := c.cfg.Store.ListCallApprovals(ctx, store.CallApprovalFilter{Status: store.CallApprovalWaiting, BeforeID: before, Limit: sweepPage})
		if err != nil {
			return expired, err
		}
		for _, rec := range page {
			if rec.CreatedAt.After(cutoff) {
				continue
			}
			switch _, err := c.expire(ctx, rec.ID); {
			case err == nil:
				expired++
			case !errors.Is(err, store.ErrConflict):
				return expired, err
			}
		}
		if len(page) < sweepPage {
			return expired, nil
		}
		before = page[len(page)-1].ID
	}
}

// RunCallApprovalExpiry expires overdue call approvals (ExpireOverdue) at once, for what the
// previous primary left, then every Settings.ReapEvery of the manager's clock, until ctx
// ends. Without Config.CallApprovals it returns at once.
func (m *Manager) RunCallApprovalExpiry(ctx context.Context) {
	c := m.CallApprovals()
	if c == nil {
		return
	}
	t, tick := m.cfg.Clock.NewTicker(m.cfg.Settings.ReapEvery)
	defer t.Stop()
	for {
		if _, err := c.ExpireOverdue(ctx); err != nil && ctx.Err() == nil {
			c.cfg.Logger.Error("call approvals not expired; the next sweep retries", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick:
		}
	}
}
