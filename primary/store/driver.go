package store

import (
	"context"
	"time"
)

// Driver persists the store's records for Portable, which decides everything else. It checks
// no argument and knows no state machine: it inserts, reads, and updates a record only while
// the record is still in the state the caller read (compare-and-set), inside transactions the
// caller scopes. Every driver passes package store/drivertest.
//
// A driver returns ErrNotFound (wrapped) for a record named by id or key that does not exist
// and ErrExists for an insert that a uniqueness rule of its schema refuses; any other error is
// a failure of the database.
type Driver interface {
	Reader
	// Update runs f in one transaction and commits it when f returns nil; when f fails, nothing
	// f wrote is kept and f's error is returned as it is. Transactions are serializable: no
	// other transaction's writes become visible to f, and none of f's are seen before the
	// commit, except that a driver may commit transactions queued together in one commit
	// (group commit): then each runs alone, sees the writes of those before it, and Update
	// returns nil only once the shared commit is done. A driver may run f again when the
	// database reports a serialization failure, so f keeps nothing outside tx between runs but
	// its results.
	Update(ctx context.Context, f func(tx Tx) error) error
	// Close releases the driver. No method may be called after it.
	Close() error
}

// Reader is a driver's queries: on the driver they read the latest committed state, on a Tx
// they read inside the transaction (its own writes included). A list's Limit is positive, or
// zero for no limit (Portable applies the default and the bound); lists are newest first
// unless their method says otherwise, and a filter's page position (BeforeID, After) is
// honoured exactly (see paging.go).
type Reader interface {
	// PendingContinuations returns up to limit unacknowledged continuations with an id above
	// after, oldest first.
	PendingContinuations(ctx context.Context, after int64, limit int) ([]Continuation, error)
	// ContinuationByKey returns the continuation of an idempotency key, acknowledged or not;
	// ErrNotFound when none has it.
	ContinuationByKey(ctx context.Context, key string) (Continuation, error)
	// ConversationMode returns the conversation's stored mode; ErrNotFound when none is.
	ConversationMode(ctx context.Context, channel, thread string) (ModeSetting, error)
	// ListConversations returns up to limit conversations with records, as
	// Conversations.ListConversations orders them (sqlstore's conversationActivity is the query);
	// Mode is zero for a conversation whose mode was never set.
	ListConversations(ctx context.Context, limit int) ([]ConversationSummary, error)
	// ShellMode returns the agent's stored shell mode; ErrNotFound when none is.
	ShellMode(ctx context.Context, channel, thread, agent string) (ShellModeSetting, error)
	// ListAudit returns the entries matching f; newest (highest id) first.
	ListAudit(ctx context.Context, f AuditFilter) ([]AuditEntry, error)
	// ListOperators returns every operator, by name.
	ListOperators(ctx context.Context) ([]Operator, error)
	Job(ctx context.Context, id int64) (Job, error)
	// ListJobs returns the jobs with the status (every job when empty).
	ListJobs(ctx context.Context, status JobStatus) ([]Job, error)
	PageJobs(ctx context.Context, f JobFilter) ([]Job, error)
	// Approval returns one approval with its comments, oldest first.
	Approval(ctx context.Context, id int64) (Approval, error)
	ListApprovals(ctx context.Context, f ApprovalFilter) ([]Approval, error)
	CallApproval(ctx context.Context, id int64) (CallApproval, error)
	ListCallApprovals(ctx context.Context, f CallApprovalFilter) ([]CallApproval, error)
	Prompt(ctx context.Context, id int64) (Prompt, error)
	ListPrompts(ctx context.Context, f PromptFilter) ([]Prompt, error)
	// PermissionAllowances returns the allowances matching f, in AllowancePosition's order.
	PermissionAllowances(ctx context.Context, f AllowanceFilter) ([]PermissionAllowance, error)
	QuestionRequest(ctx context.Context, id int64) (QuestionRequest, error)
	ListQuestionRequests(ctx context.Context, f QuestionFilter) ([]QuestionRequest, error)
	// ListProgress returns the snapshots matching f, most recently updated first, then by
	// response id.
	ListProgress(ctx context.Context, f ProgressFilter) ([]ProgressSnapshot, error)
	// ListThreadEvents returns the events matching f with an id above f.After, oldest first.
	ListThreadEvents(ctx context.Context, f ThreadEventFilter) ([]ThreadEvent, error)
	// IdentityLink returns the account's link; ErrNotFound when it has none.
	IdentityLink(ctx context.Context, surface, chatUserID string) (IdentityLink, error)
	// ListIdentityLinks returns the links matching f, in IdentityLinkPosition's order.
	ListIdentityLinks(ctx context.Context, f IdentityLinkFilter) ([]IdentityLink, error)
	// SurfaceCard returns the card showing the item on the surface; ErrNotFound when none.
	SurfaceCard(ctx context.Context, surface, itemKey string) (SurfaceCard, error)
	// SurfaceCardByMessage returns the surface's card of the message; ErrNotFound when none.
	SurfaceCardByMessage(ctx context.Context, surface, messageID string) (SurfaceCard, error)
	// SurfacePosition returns the surface's position of the name; ErrNotFound when none.
	SurfacePosition(ctx context.Context, surface, name string) (SurfacePosition, error)
}

// Tx is one transaction of a driver: its reads and its writes. Inserts take the whole record
// as Portable made it (its initial state and times included) and return the id they assigned;
// an Update method writes the record's changeable fields only while the stored record is
// still in the prior state it is given, and reports with false, writing nothing, when it is
// not (or no longer exists).
//
// A Queue method's write may be held back by the driver and sent with the transaction's next
// statement, or with its commit, saving a round trip to a database server: it still runs
// before that statement, and a failure of it fails the transaction whether or not its result
// is read (Update then returns the failure and keeps nothing). Its result is read through the
// function it returns, which sends the write first if it is still held; once Update has
// returned nil the function gives the result read at the commit and runs nothing. So a
// transaction whose writes are all queued, and whose function reads none of their results,
// costs one round trip with its commit.
//
// A queued compare-and-set that finds its record in another state, or missing, fails the
// transaction with ErrUnmatched where its method says so: the database itself refuses to
// commit what was queued after it.
type Tx interface {
	Reader

	// QueueAudit appends e (its Detail a compact JSON object) at the time given, and may be
	// held back. The function returned gives the entry's id.
	QueueAudit(ctx context.Context, e NewAuditEntry, at time.Time) func() (int64, error)

	// InsertContinuation adds c unless a continuation with its idempotency key exists; then it
	// returns that one's id and created false.
	InsertContinuation(ctx context.Context, c NewContinuation, at time.Time) (id int64, created bool, err error)
	// QueueContinuation adds c as InsertContinuation does, and may be held back.
	QueueContinuation(ctx context.Context, c NewContinuation, at time.Time) func() (id int64, created bool, err error)
	// CountContinuationDelivery adds one to the delivery count of a continuation that is not
	// acknowledged and returns the new count; pending is false, and nothing is written, when
	// it is acknowledged or does not exist.
	CountContinuationDelivery(ctx context.Context, id int64) (attempt int, pending bool, err error)
	// AckContinuation marks a continuation acknowledged at the time given, keeping the time of
	// an earlier acknowledgement; ErrNotFound when it does not exist.
	AckContinuation(ctx context.Context, id int64, at time.Time) error

	// PutConversationMode stores a conversation's mode, replacing any.
	PutConversationMode(ctx context.Context, channel, thread string, m ModeSetting) error
	// PutShellMode stores an agent's shell mode, replacing any.
	PutShellMode(ctx context.Context, channel, thread, agent string, m ShellModeSetting) error
	// DeleteShellMode forgets an agent's shell mode; deleting none is not an error.
	DeleteShellMode(ctx context.Context, channel, thread, agent string) error

	// InsertOperator adds o; ErrExists when its name is taken.
	InsertOperator(ctx context.Context, o Operator) error
	// DeleteOperator removes an operator; ErrNotFound when there is none by that name.
	DeleteOperator(ctx context.Context, name string) error

	// InsertJob adds j (its ID ignored) and returns its id.
	InsertJob(ctx context.Context, j Job) (int64, error)
	// UpdateJob writes j's log path, status, worker, cancel request, process, end time and
	// result while job j.ID is in state from.
	UpdateJob(ctx context.Context, from JobStatus, j Job) (bool, error)
	// QueueEndJob writes job id's status to, its end time and its result while it is in state
	// from, leaving its other fields as stored: a job's end without reading it, and may be
	// held back. The function returned reports whether it was written; a job that does not
	// exist fails the transaction with ErrUnmatched.
	QueueEndJob(ctx context.Context, id int64, from, to JobStatus, at time.Time, r JobResult) func() (bool, error)

	// InsertApproval adds a (its ID and comments ignored) unless a pending approval with a.Key
	// exists: then it returns that one's id and created false.
	InsertApproval(ctx context.Context, a Approval) (id int64, created bool, err error)
	// UpdateApproval writes next's status, decider, decision time, job, note and settle time
	// while approval next.ID still has prev's status and job.
	UpdateApproval(ctx context.Context, prev, next Approval) (bool, error)
	// QueueApprovalChange writes change on approval id while it is in state from (and, when
	// withJob, has a job), and may be held back. The function returned gives the approval as
	// then stored, its comments included. An approval in another state, or missing, fails the
	// transaction with ErrUnmatched.
	QueueApprovalChange(ctx context.Context, id int64, from ApprovalStatus, withJob bool, change ApprovalChange) func() (Approval, error)
	// InsertApprovalComment adds a comment to approval id while it is in state from.
	InsertApprovalComment(ctx context.Context, id int64, from ApprovalStatus, c ApprovalComment) (bool, error)

	// InsertCallApproval adds c (its ID ignored); ErrExists when its response already saved
	// a call with its call id.
	InsertCallApproval(ctx context.Context, c CallApproval) (int64, error)
	// UpdateCallApproval writes next's status, decider, decision time, note, claim time,
	// result and settle time while record next.ID is in state from.
	UpdateCallApproval(ctx context.Context, from CallApprovalStatus, next CallApproval) (bool, error)

	// InsertPrompt adds p (its ID ignored; MaskedInput compact JSON or nil).
	InsertPrompt(ctx context.Context, p Prompt) (int64, error)
	// UpdatePrompt writes next's status, decider, decision time, decision and feedback while
	// prompt next.ID is in state from.
	UpdatePrompt(ctx context.Context, from PromptStatus, next Prompt) (bool, error)
	// PutPermissionAllowance stores a, replacing the allowance of its conversation, tool and
	// scope.
	PutPermissionAllowance(ctx context.Context, a PermissionAllowance) error
	// DeletePermissionAllowance removes the allowance of a's conversation, tool and scope and
	// returns it as it was; ErrNotFound when there is none.
	DeletePermissionAllowance(ctx context.Context, a PermissionAllowance) (PermissionAllowance, error)
	// DeletePermissionAllowances removes every allowance of the scope.
	DeletePermissionAllowances(ctx context.Context, scope string) error

	// InsertQuestionRequest adds q (its ID ignored) under key unless its requester has a
	// pending request in its thread: then it returns that one's id and created false.
	InsertQuestionRequest(ctx context.Context, key string, q QuestionRequest) (id int64, created bool, err error)
	// UpdateQuestionRequest writes next's status, revision, draft, answers, update time,
	// submission and cancellation while request next.ID still has prev's status and revision.
	UpdateQuestionRequest(ctx context.Context, prev, next QuestionRequest) (bool, error)

	// PutProgress stores p (Steps compact JSON), replacing its response's snapshot.
	PutProgress(ctx context.Context, p ProgressSnapshot) error

	// QueueThreadEvent appends e at the time given, in the conversation of the item it names
	// as its record stands (nothing when there is no such record, or it has no channel), and
	// may be held back. Ids commit in increasing order, as continuations' do.
	QueueThreadEvent(ctx context.Context, e NewThreadEvent, at time.Time)

	// PutIdentityLink stores l, replacing the link of its account.
	PutIdentityLink(ctx context.Context, l IdentityLink) error
	// DeleteIdentityLink removes the account's link and returns it as it was; ErrNotFound
	// when there is none.
	DeleteIdentityLink(ctx context.Context, surface, chatUserID string) (IdentityLink, error)
	// DeleteIdentityLinksOf removes every link to person and returns them as they were, in
	// no particular order.
	DeleteIdentityLinksOf(ctx context.Context, person string) ([]IdentityLink, error)

	// PutSurfaceCard stores c, replacing the card of its surface and item; ErrExists when
	// another item's card on the surface is its message.
	PutSurfaceCard(ctx context.Context, c SurfaceCard) error
	// PutSurfacePosition stores p, replacing the surface's position of its name.
	PutSurfacePosition(ctx context.Context, p SurfacePosition) error
}

// ApprovalChange is what a transition writes on an approval: its status, its decision when
// DecidedAt is set, and its note and settlement when SettledAt is set; what it does not set
// stays as stored.
type ApprovalChange struct {
	Status    ApprovalStatus
	DecidedBy string
	DecidedAt time.Time
	Note      string
	SettledAt time.Time
}
