package response

import (
	"strings"
	"time"

	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/primary/store"
)

// What a call that needed a person's confirmation and did not get it fails with.

// Reasons of a call that needed a person's confirmation and did not run, the outcome's
// "reason": what a script branches on.
const (
	ReasonApprovalDenied  = "approval_denied"
	ReasonApprovalExpired = "approval_expired"
)

// NotApproved is the error of a call its requester denied without a note (contract section
// 6).
const NotApproved = "Not approved by requester"

// notApprovedByOperator is the error of a call another operator than its requester denied
// without a note.
const notApprovedByOperator = "Not approved by an operator, not by the requester"

// notApprovedOutcome is the outcome of a denied or expired call: the object
// {"decided_by","error","reason"} (decided_by null for an expiry), so a script can tell a
// denial from an expiry, and both from a tool's failure, without reading prose; error keeps
// the text people read.
func (c *CallApprovals) notApprovedOutcome(rec store.CallApproval) []byte {
	var by any
	if rec.Status == store.CallApprovalDenied {
		by = rec.DecidedBy
	}
	out, err := canonjson.Marshal(map[string]any{
		"decided_by": by, "error": strings.ToValidUTF8(c.notApprovedText(rec), "\uFFFD"), "reason": c.reasonOf(rec),
	})
	if err != nil { // unreachable: names and notes are UTF-8 within the store's bounds
		return errorOutcome(c.notApprovedText(rec))
	}
	return out
}

func (c *CallApprovals) reasonOf(rec store.CallApproval) string {
	if rec.Status == store.CallApprovalExpired {
		return ReasonApprovalExpired
	}
	return ReasonApprovalDenied
}

// notApprovedText says why rec did not run. A denial says its note, or who did not approve
// it: any operator may deny a call (only an admin may approve one), so the contract's fixed
// text, which says the requester denied it, is kept for the requester's own denial, and
// another operator's is said without their name, which the agent has no need of.
func (c *CallApprovals) notApprovedText(rec store.CallApproval) string {
	switch {
	case rec.Status == store.CallApprovalExpired:
		return "Approval expired: nobody decided within " + shortDuration(c.mgr.cfg.Settings.CallApprovalExpiry) + "; the call did not run"
	case rec.Note != "":
		return rec.Note
	case rec.DecidedBy != "" && rec.DecidedBy == rec.Requester:
		return NotApproved
	default:
		return notApprovedByOperator
	}
}

// shortDuration writes d without the zero units time.Duration.String adds: 24h, 1h30m, 1m30s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
