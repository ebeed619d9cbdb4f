package store

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/turncli/turncli/internal/fault"
)

// Approvals keeps durable exact-command approvals: a command an agent asked to run in the
// background, saved until an admin approves it (then it runs exactly once) or someone denies
// it. States: pending → executing → consumed | failed, or pending → denied. Every transition is
// a compare-and-swap in one transaction together with its audit entry. A transition on an id
// that does not exist is ErrNotFound; actor is required; a comment, deny reason or note is at
// most MaxApprovalComment bytes of valid UTF-8.
type Approvals interface {
	// SaveApproval saves a pending approval. When a pending approval with the same authority
	// key exists it is returned instead and created is false (one card per identical request);
	// a key whose earlier approval is no longer pending gets a new one.
	SaveApproval(ctx context.Context, a NewApproval) (ap Approval, created bool, err error)
	// Approval returns one approval with its comments; ErrNotFound when it does not exist.
	Approval(ctx context.Context, id int64) (Approval, error)
	// ListApprovals returns the approvals matching f, newest first, with their comments.
	ListApprovals(ctx context.Context, f ApprovalFilter) ([]Approval, error)
	// BeginApproval moves a pending approval to executing, recording actor as its decider, and
	// appends ActionApprovalApprove. ErrConflict when it is not pending.
	BeginApproval(ctx context.Context, id int64, actor string) (Approval, error)
	// DenyApproval moves a pending approval to denied with the reason (may be empty) and
	// appends ActionApprovalDeny. ErrConflict when it is not pending. The continuations in
	// tell (telling the conversation) are enqueued in the same transaction.
	DenyApproval(ctx context.Context, id int64, actor, reason string, tell ...NewContinuation) (Approval, error)
	// CommentApproval adds a comment to a pending approval (it stays pending) and appends
	// ActionApprovalComment. ErrConflict when it is not pending; text is 1..MaxApprovalComment
	// bytes. tell is enqueued in the same transaction.
	CommentApproval(ctx context.Context, id int64, actor, text string, tell ...NewContinuation) (Approval, error)
	// CreateApprovedJob checks the caps and inserts j as a running job linked to the executing
	// approval, in one transaction: after it, the approval has a recorded job. ErrConflict when
	// the approval is not executing or already has a job; cap errors as CreateJob; ErrInvalid
	// when j's kind, channel, thread, author, command or ceiling differ from the approval's (the
	// job runs the exact command approved).
	CreateApprovedJob(ctx context.Context, approvalID int64, j NewJob, caps JobCaps) (Job, error)
	// SettleApproval moves an executing approval to consumed or failed with a note (why it
	// failed) and appends ActionApprovalConsume or ActionApprovalFail with actor "primary".
	// ErrConflict when it is not executing, or for consumed when it has no recorded job;
	// ErrInvalid for another target state. tell is enqueued in the same transaction.
	SettleApproval(ctx context.Context, id int64, to ApprovalStatus, note string, tell ...NewContinuation) (Approval, error)
	// RecoverApprovals is called once at boot: every executing approval with a recorded job is
	// consumed, every one without is failed with ApprovalRestartNote, each with its audit entry
	// (actor "primary"), all in one transaction; nothing is re-run. It returns the approvals it
	// settled (none on a second call).
	RecoverApprovals(ctx context.Context) ([]Approval, error)
}

// ErrConflict: the record is not in the state the transition needs (an approval decided
// already: a replay).
var ErrConflict = fault.New(fault.Conflict, "conflict")

// ApprovalStatus is a durable approval's state.
type ApprovalStatus string

// The approval states.
const (
	ApprovalPending   ApprovalStatus = "pending"
	ApprovalExecuting ApprovalStatus = "executing"
	ApprovalConsumed  ApprovalStatus = "consumed"
	ApprovalFailed    ApprovalStatus = "failed"
	ApprovalDenied    ApprovalStatus = "denied"
)

// ApprovalRestartNote is the note of an approval found executing without a job at boot.
const ApprovalRestartNote = "restarted while starting; not retried"

// MaxApprovalComment is the longest comment or deny reason, in bytes.
const MaxApprovalComment = 2000

// Audit actions of approvals.
const (
	// ActionApprovalApprove: detail {"approval": id}.
	ActionApprovalApprove = "approval.approve"
	// ActionApprovalDeny: detail {"approval": id, "reason": text}.
	ActionApprovalDeny = "approval.deny"
	// ActionApprovalComment: detail {"approval": id, "comment": text}.
	ActionApprovalComment = "approval.comment"
	// ActionApprovalConsume: an executing approval's job was started (SettleApproval, or
	// RecoverApprovals at boot); actor "primary", detail {"approval": id, "job": job id}.
	ActionApprovalConsume = "approval.consume"
	// ActionApprovalFail: an executing approval could not start its job (SettleApproval, or
	// RecoverApprovals at boot); actor "primary", detail {"approval": id, "note": text}.
	ActionApprovalFail = "approval.fail"
)

// ApprovalSubject is the audit subject of an approval.
func ApprovalSubject(id int64) string { return "approval/" + strconv.FormatInt(id, 10) }

// NewApproval is an approval to save. Kind, Channel, Thread, Author, Command, Workdir and
// Ceiling are its authority fields: they, and only they, make its key.
type NewApproval struct {
	Kind    string // "command"
	Channel string // required
	Thread  string
	Author  string
	Command string // required
	// Workdir names where the command runs: the shell location and the directory there.
	Workdir string        // required
	Ceiling time.Duration // not negative
	// Not authority: shown to people and copied to the job.
	Label     string
	Agent     string
	WorkerKey string // empty: the primary's own host
}

// Key is the hex SHA-256 of the authority fields, each length-prefixed so no two different
// field lists share an encoding.
func (a NewApproval) Key() string {
	h := sha256.New()
	var n [8]byte
	for _, f := range []string{a.Kind, a.Channel, a.Thread, a.Author, a.Command, a.Workdir} {
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		h.Write(n[:])
		h.Write([]byte(f))
	}
	binary.BigEndian.PutUint64(n[:], uint64(a.Ceiling))
	h.Write(n[:])
	return hex.EncodeToString(h.Sum(nil))
}

// Approval is a stored approval.
type Approval struct {
	ID int64
	NewApproval
	Key       string
	Status    ApprovalStatus
	CreatedAt time.Time
	// DecidedBy and DecidedAt are set when it left pending (approved or denied).
	DecidedBy string
	DecidedAt time.Time
	// JobID is the job it started; zero until CreateApprovedJob.
	JobID int64
	// Note says why it was denied or failed.
	Note string
	// Comments are oldest first.
	Comments []ApprovalComment
	// SettledAt is when it reached consumed, failed or denied; zero before.
	SettledAt time.Time
}

// ApprovalComment is one comment on an approval.
type ApprovalComment struct {
	Actor string
	Text  string
	At    time.Time
}

// ApprovalFilter selects approvals; empty fields match everything.
type ApprovalFilter struct {
	Status  ApprovalStatus
	Channel string
	// Thread is compared only when Channel is set.
	Thread string
	// BeforeID, when positive, returns only older records (smaller ids): the id of the last
	// record of the previous page.
	BeforeID int64
	// Limit is at most 1000; zero means 100.
	Limit int
}
