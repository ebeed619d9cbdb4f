package store

import (
	"context"
	"strconv"
	"time"
)

// CallApprovals keeps the Agent CLI calls of functions that need a person's confirmation. The
// exact call is saved, with the runtime's checkpoint of the Bash command that made it, before
// the call has any effect, so that a decision taken after the primary restarted runs exactly
// that call and nothing else.
//
// States: waiting → approved → claimed → done | interrupted, or waiting → denied | expired.
// approved means decided but not started; expired means nobody decided in time (it has no
// decider); claimed means whoever claimed it has started the call (and it
// may have had effects), so a claimed record found at boot is interrupted, never re-run. Every
// transition is a compare-and-swap in one transaction with its audit entry; a transition on an
// id that does not exist is ErrNotFound, one from the wrong state is ErrConflict (nothing
// changed). Continuations given to a transition (tell) are enqueued in its transaction.
type CallApprovals interface {
	// SaveCallApproval saves c as waiting and appends ActionCallApprovalRequest (actor
	// "primary"). ErrInvalid when c breaks a rule of NewCallApproval; ErrConflict when the
	// response already saved a call with that id.
	SaveCallApproval(ctx context.Context, c NewCallApproval) (CallApproval, error)
	// CallApproval returns one record; ErrNotFound when it does not exist.
	CallApproval(ctx context.Context, id int64) (CallApproval, error)
	// ListCallApprovals returns the records matching f, newest first.
	ListCallApprovals(ctx context.Context, f CallApprovalFilter) ([]CallApproval, error)
	// ApproveCallApproval moves a waiting record to approved, recording actor as its decider,
	// and appends ActionCallApprovalApprove.
	ApproveCallApproval(ctx context.Context, id int64, actor string) (CallApproval, error)
	// DenyCallApproval moves a waiting record to denied with note (may be empty, at most
	// MaxApprovalComment bytes of UTF-8) and appends ActionCallApprovalDeny.
	DenyCallApproval(ctx context.Context, id int64, actor, note string, tell ...NewContinuation) (CallApproval, error)
	// ExpireCallApproval moves a waiting record to expired (no decider) and appends
	// ActionCallApprovalExpire (actor "primary"). A record decided first is ErrConflict: the
	// decision stands.
	ExpireCallApproval(ctx context.Context, id int64, tell ...NewContinuation) (CallApproval, error)
	// ClaimCallApproval moves an approved record to claimed and appends ActionCallApprovalClaim
	// (actor "primary"). Only the claimer runs the call: a second claim is ErrConflict.
	ClaimCallApproval(ctx context.Context, id int64) (CallApproval, error)
	// FinishCallApproval moves a claimed record to done or interrupted with the call's result
	// and appends ActionCallApprovalFinish (actor "primary"). ErrInvalid for another target
	// state or a result without a status.
	FinishCallApproval(ctx context.Context, id int64, to CallApprovalStatus, res CallResult, tell ...NewContinuation) (CallApproval, error)
}

// CallApprovalStatus is a call approval's state.
type CallApprovalStatus string

// The call approval states.
const (
	CallApprovalWaiting     CallApprovalStatus = "waiting"
	CallApprovalApproved    CallApprovalStatus = "approved"
	CallApprovalClaimed     CallApprovalStatus = "claimed"
	CallApprovalDone        CallApprovalStatus = "done"
	CallApprovalInterrupted CallApprovalStatus = "interrupted"
	CallApprovalDenied      CallApprovalStatus = "denied"
	CallApprovalExpired     CallApprovalStatus = "expired"
)

// Valid reports whether st is one of the states.
func (st CallApprovalStatus) Valid() bool {
	switch st {
	case CallApprovalWaiting, CallApprovalApproved, CallApprovalClaimed, CallApprovalDone, CallApprovalInterrupted, CallApprovalDenied, CallApprovalExpired:
		return true
	}
	return false
}

// Final reports whether st is an end state.
func (st CallApprovalStatus) Final() bool {
	return st == CallApprovalDone || st == CallApprovalInterrupted || st == CallApprovalDenied || st == CallApprovalExpired
}

// Audit actions of call approvals; each detail holds {"call_approval": id, "call_id": …}.
const (
	// ActionCallApprovalRequest: a call was saved waiting (actor "primary"); detail adds
	// toolkit, function and response_id.
	ActionCallApprovalRequest = "call_approval.request"
	// ActionCallApprovalApprove: an operator approved it.
	ActionCallApprovalApprove = "call_approval.approve"
	// ActionCallApprovalDeny: an operator denied it; detail adds the note.
	ActionCallApprovalDeny = "call_approval.deny"
	// ActionCallApprovalExpire: nobody decided it in time (actor "primary").
	ActionCallApprovalExpire = "call_approval.expire"
	// ActionCallApprovalClaim: the primary started the call (actor "primary").
	ActionCallApprovalClaim = "call_approval.claim"
	// ActionCallApprovalFinish: the call ended (actor "primary"); detail adds the state
	// reached and the call's status.
	ActionCallApprovalFinish = "call_approval.finish"
)

// CallApprovalSubject is the audit subject (and live feed subject) of a call approval.
func CallApprovalSubject(id int64) string { return "call_approval/" + strconv.FormatInt(id, 10) }

// Limits of a call approval's fields.
const (
	// MaxCallArguments bounds the canonical arguments, in bytes (an Agent CLI body's size).
	MaxCallArguments = 64 << 10
	// MaxCheckpoint bounds the runtime's checkpoint, in bytes.
	MaxCheckpoint = 1 << 20
	// MaxCallOutcome bounds a recorded outcome, in bytes (a receipt's outcome budget and its
	// marker).
	MaxCallOutcome = 32 << 10
)

// NewCallApproval is an exact call to save before it runs.
type NewCallApproval struct {
	// CallID is the call's id (a canonical UUID), unique within its response; required.
	CallID string
	// Toolkit and Function name the function; required.
	Toolkit  string
	Function string
	// Arguments is the canonical JSON of the arguments object, exactly what runs; required.
	Arguments string
	// BashCallID is the runtime's id of the Bash command whose window admitted the call.
	BashCallID string
	// ResponseID is the response that admitted it; required.
	ResponseID string
	// The response's identity, which a recovered call runs under again.
	Agent     string // required
	Requester string
	Channel   string
	Thread    string
	WorkerKey string
	// Checkpoint is the runtime's opaque checkpoint of the Bash command (may be empty), at most
	// MaxCheckpoint bytes; it travels back in the call's continuation.
	Checkpoint []byte
}

// CallResult is how a started call ended.
type CallResult struct {
	// Status is the receipt status it ended with: "completed", "failed" or "cancelled".
	Status string
	// Outcome is the receipt's outcome, canonical JSON, at most MaxCallOutcome bytes.
	Outcome string
}

// CallApproval is a saved call.
type CallApproval struct {
	ID int64
	NewCallApproval
	Status    CallApprovalStatus
	CreatedAt time.Time
	// DecidedBy and DecidedAt are set once it was approved or denied; an expired record has
	// neither.
	DecidedBy string
	DecidedAt time.Time
	// Note is a denial's note; may be empty.
	Note string
	// ClaimedAt is when the call started; zero before.
	ClaimedAt time.Time
	// Result is set when it reached done or interrupted.
	Result CallResult
	// SettledAt is when it reached done, interrupted, denied or expired; zero before.
	SettledAt time.Time
}

// CallApprovalFilter selects call approvals; empty fields match everything.
type CallApprovalFilter struct {
	Status  CallApprovalStatus
	Channel string
	// Thread is compared only when Channel is set.
	Thread string
	// ResponseID, when set, matches only that response's calls.
	ResponseID string
	// BeforeID, when positive, returns only older records (smaller ids): the id of the last
	// record of the previous page.
	BeforeID int64
	// Limit is at most 1000; zero means 100.
	Limit int
}
