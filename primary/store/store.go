package store

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"time"

	"github.com/turncli/turncli/internal/fault"
)

// Store is the primary's durable state. Its methods are safe for concurrent use; each is one
// transaction.
type Store interface {
	Continuations
	ConversationModes
	Conversations
	ShellModes
	AuditLog
	Operators
	Jobs
	Approvals
	Prompts
	Questions
	Progress
	CallApprovals
	ThreadEvents
	IdentityLinks
	SurfaceCards
	// Close releases the store. No method may be called after it.
	Close() error
}

// Continuations is the outbox of events for the runtime ("resume this conversation with this
// text"), delivered at least once until acknowledged.
type Continuations interface {
	// EnqueueContinuation adds c to the outbox, unless a continuation with its idempotency key
	// already exists: then it returns that one's id and created=false, and c is dropped (the
	// first one wins, acknowledged or not).
	EnqueueContinuation(ctx context.Context, c NewContinuation) (id int64, created bool, err error)
	// PendingContinuations returns up to limit unacknowledged continuations whose id is
	// greater than after, oldest first.
	PendingContinuations(ctx context.Context, after int64, limit int) ([]Continuation, error)
	// RecordContinuationDelivery counts one more delivery of a continuation that is still
	// pending and returns its attempt number (1 for the first). pending is false, and nothing
	// is counted, when it was acknowledged meanwhile or never existed.
	RecordContinuationDelivery(ctx context.Context, id int64) (attempt int, pending bool, err error)
	// AckContinuation acknowledges a continuation: it is never pending again. Acknowledging
	// twice is not an error; an id never issued is ErrNotFound.
	AckContinuation(ctx context.Context, id int64) error
	// ContinuationByKey returns the continuation of an idempotency key, acknowledged or not;
	// ErrNotFound when none has it.
	ContinuationByKey(ctx context.Context, key string) (Continuation, error)
}

// ConversationModes keeps each conversation's mode.
type ConversationModes interface {
	// ConversationMode returns the conversation's mode: ModeAsk with a zero UpdatedAt when it
	// was never set.
	ConversationMode(ctx context.Context, channel, thread string) (ModeSetting, error)
	// SetConversationMode sets the conversation's mode and appends its audit entry
	// (ActionConversationModeSet, with the previous mode) in the same transaction.
	SetConversationMode(ctx context.Context, channel, thread string, mode Mode, actor string) (ModeSetting, error)
}

// AuditLog records decisions and mode changes: who, what, when. Entries are never changed.
type AuditLog interface {
	// AppendAudit appends one entry and returns its id.
	AppendAudit(ctx context.Context, e NewAuditEntry) (int64, error)
	// ListAudit returns the entries matching f, newest first.
	ListAudit(ctx context.Context, f AuditFilter) ([]AuditEntry, error)
}

// Errors the store returns; wrapped with details, compare with errors.Is. They are faults of
// their kind, so a wrapped one reaches the caller with its whole text: the store wraps them
// only with words a caller may read.
var (
	// ErrNotFound: the record named does not exist.
	ErrNotFound = fault.New(fault.NotFound, "not found")
	// ErrUnmatched: a driver's queued compare-and-set found its record in another state, or
	// missing, and failed its transaction (see Tx). Portable turns it into the error its
	// method states; a caller of the store never sees it.
	ErrUnmatched = errors.New("the record was not in the state the transaction expected")
	// ErrInvalid: the arguments break a rule stated on the method or type.
	ErrInvalid = fault.New(fault.InvalidArgument, "invalid argument")
	// ErrForbidden: the person may not do this (answer another person's questions, widen a
	// permission beyond their role).
	ErrForbidden = fault.New(fault.PermissionDenied, "not allowed")
	// ErrSchemaTooNew: the database was written by a newer primary; this one refuses to open it
	// rather than guess at a schema it does not know.
	ErrSchemaTooNew = errors.New("database schema is newer than this primary")
)

// MaxIdempotencyKey is the longest idempotency key, in bytes.
const MaxIdempotencyKey = 256

// NewContinuation is a continuation to enqueue.
type NewContinuation struct {
	// IdempotencyKey names the event (for example "job/<id>"), 1..MaxIdempotencyKey bytes.
	IdempotencyKey string
	// Channel (required) and Thread (empty for the channel's main timeline) name the
	// conversation to resume.
	Channel string
	Thread  string
	// Text is what to resume with; required.
	Text string
	// Post asks the runtime to post Text to the conversation as it is, without a model turn
	// (a background agent's report); otherwise a model turn resumes with it.
	Post bool
	// Checkpoint is the runtime's opaque checkpoint a continuation hands back (the Bash
	// command a recovered call came from), at most MaxCheckpoint bytes; usually empty.
	Checkpoint []byte
}

// Continuation is a continuation in the outbox.
type Continuation struct {
	ID             int64
	IdempotencyKey string
	Channel        string
	Thread         string
	Text           string
	Post           bool
	Checkpoint     []byte
	CreatedAt      time.Time
	// DeliveredCount counts deliveries so far, to any subscriber.
	DeliveredCount int
	// AckedAt is zero while the continuation is pending.
	AckedAt time.Time
}

// Mode is a conversation mode (contract: interaction controls).
type Mode string

// The conversation modes.
const (
	ModeAsk   Mode = "ask"
	ModeAuto  Mode = "auto"
	ModeAdmin Mode = "admin"
)

// Valid reports whether m is one of the modes.
func (m Mode) Valid() bool { return m == ModeAsk || m == ModeAuto || m == ModeAdmin }

// ModeSetting is a conversation's mode and who set it when.
type ModeSetting struct {
	Mode Mode
	// UpdatedAt is zero, and UpdatedBy empty, for a mode never set (the default).
	UpdatedAt time.Time
	UpdatedBy string
}

// Audit actions written by the store itself.
const (
	// ActionConversationModeSet: detail {"channel","thread","mode","previous"}.
	ActionConversationModeSet = "conversation_mode.set"
)

// ConversationSubject is the audit subject of a conversation.
func ConversationSubject(channel, thread string) string {
	return "conversation/" + url.PathEscape(channel) + "/" + url.PathEscape(thread)
}

// NewAuditEntry is an entry to append.
type NewAuditEntry struct {
	// Actor is who decided (an operator id, "runtime", "primary"); required.
	Actor string
	// Action is what was done, as "area.verb" (for example "approval.approve"); required.
	Action string
	// Subject is what it was done to (see ConversationSubject); may be empty.
	Subject string
	// Detail is a JSON object, or empty for {}. Never secret values: callers mask them.
	Detail json.RawMessage
}

// AuditEntry is an appended entry.
type AuditEntry struct {
	ID      int64
	At      time.Time
	Actor   string
	Action  string
	Subject string
	Detail  json.RawMessage
}

// AuditFilter selects audit entries; empty fields match everything.
type AuditFilter struct {
	Actor   string
	Action  string
	Subject string
	// BeforeID, when positive, returns only older entries (for paging).
	BeforeID int64
	// Limit is at most 1000; zero means 100.
	Limit int
}
