package store

import (
	"context"
	"encoding/json"
	"strconv"
	"time"
)

// Prompts keeps the requests of request_approval and permission_prompt ("prompts") and the
// permission allow-lists. A prompt is saved pending and leaves pending exactly once: decided
// by an operator (approved or denied), or expired (nobody decided in time, the call ended, or
// the primary restarted). Each change is a compare-and-swap in one transaction together with
// its audit entry. Waiting for a decision is the caller's: the store wakes nobody.
//
// A permission prompt holds only the masked copy of the tool input; the store never sees the
// original.
type Prompts interface {
	// CreatePrompt saves p as pending. ErrInvalid when p breaks a rule of NewPrompt.
	CreatePrompt(ctx context.Context, p NewPrompt) (Prompt, error)
	// Prompt returns one prompt; ErrNotFound when it does not exist.
	Prompt(ctx context.Context, id int64) (Prompt, error)
	// ListPrompts returns the prompts matching f, newest first.
	ListPrompts(ctx context.Context, f PromptFilter) ([]Prompt, error)
	// DecidePrompt moves a pending prompt to approved (approve, allow_*) or denied (deny,
	// comment), recording actor, decision and feedback, and appends ActionPromptDecide.
	// allow_thread and allow_conversation also grant the prompt's tool in its conversation
	// (see PermissionAllowance), in the same transaction. ErrNotFound for an unknown id;
	// ErrInvalid without an actor, for a decision that is not one of the prompt's kind, or for
	// feedback over MaxPromptText characters; ErrConflict when it is not pending.
	DecidePrompt(ctx context.Context, id int64, actor, decision, feedback string) (Prompt, error)
	// ExpirePrompt moves a pending prompt to expired with reason (1..MaxPromptText
	// characters) as its feedback and appends ActionPromptExpire with actor "primary".
	// ErrConflict when it is not pending (it was decided meanwhile).
	ExpirePrompt(ctx context.Context, id int64, reason string) (Prompt, error)
	// ExpirePendingPrompts is called once at boot and ends what lived only as long as the
	// previous primary: every pending prompt expires with reason (each with its audit entry,
	// actor "primary"), since nobody waits for its decision any more, except a prompt a parked
	// job waits on (ParkedJob), whose decision resumes the job; and the thread-scoped
	// permission allowances are dropped. One transaction; it returns the prompts it expired.
	ExpirePendingPrompts(ctx context.Context, reason string) ([]Prompt, error)
	// UsePermissionAllowance reports whether u's tool is allowed in u's conversation without
	// asking u's agent: only an allowance granted on a request of that agent counts. When it
	// is, it appends ActionPermissionAutoAllow (actor "primary") in the same transaction and
	// returns the allowance used (a conversation-scoped one before a thread-scoped one).
	UsePermissionAllowance(ctx context.Context, u PermissionUse) (a PermissionAllowance, allowed bool, err error)
	// ListPermissionAllowances returns the allowances matching f, most recently granted
	// first (see AllowancePosition).
	ListPermissionAllowances(ctx context.Context, f AllowanceFilter) ([]PermissionAllowance, error)
	// RevokePermissionAllowance removes one allowance and appends ActionPermissionRevoke, in
	// one transaction. ErrNotFound when there is no such allowance.
	RevokePermissionAllowance(ctx context.Context, a PermissionAllowance, actor string) error
}

// PromptKind says which tool posted a prompt.
type PromptKind string

// The prompt kinds.
const (
	PromptApproval   PromptKind = "approval"   // request_approval
	PromptPermission PromptKind = "permission" // permission_prompt
)

// Valid reports whether k is one of the kinds.
func (k PromptKind) Valid() bool { return k == PromptApproval || k == PromptPermission }

// PromptStatus is a prompt's state: pending → approved | denied | expired.
type PromptStatus string

// The prompt states.
const (
	PromptPending  PromptStatus = "pending"
	PromptApproved PromptStatus = "approved"
	PromptDenied   PromptStatus = "denied"
	PromptExpired  PromptStatus = "expired"
)

// Valid reports whether st is one of the states.
func (st PromptStatus) Valid() bool {
	return st == PromptPending || st == PromptApproved || st == PromptDenied || st == PromptExpired
}

// The decisions an operator makes on a prompt. An approval prompt takes approve, deny or
// comment (request changes: it ends the prompt, not approved); a permission prompt takes
// allow_once, allow_thread, allow_conversation or deny.
const (
	DecisionApprove           = "approve"
	DecisionDeny              = "deny"
	DecisionComment           = "comment"
	DecisionAllowOnce         = "allow_once"
	DecisionAllowThread       = "allow_thread"
	DecisionAllowConversation = "allow_conversation"
)

// DecisionFits reports whether decision is one a prompt of kind takes.
func DecisionFits(kind PromptKind, decision string) bool {
	switch kind {
	case PromptApproval:
		return decision == DecisionApprove || decision == DecisionDeny || decision == DecisionComment
	case PromptPermission:
		return decision == DecisionAllowOnce || decision == DecisionAllowThread || decision == DecisionAllowConversation ||
			decision == DecisionDeny
	}
	return false
}

// DecisionStatus is the state a decision moves a prompt to.
func DecisionStatus(decision string) PromptStatus {
	switch decision {
	case DecisionApprove, DecisionAllowOnce, DecisionAllowThread, DecisionAllowConversation:
		return PromptApproved
	}
	return PromptDenied
}

// Limits of a prompt's texts, in characters.
const (
	MaxPromptDetails = 8000
	MaxPromptTitle   = 200
	MaxPromptLabel   = 60
	MaxToolName      = 200
	// MaxPromptText bounds a decision's feedback (deny reason, comment) and an expiry reason.
	MaxPromptText = 2000
)

// PromptRestartReason is the feedback of a prompt still pending when the primary restarted.
const PromptRestartReason = "The primary restarted before anyone answered."

// Audit actions of prompts.
const (
	// ActionPromptDecide: detail {"prompt": id, "kind", "decision", "feedback"}, and
	// "tool_name" for a permission prompt. Never the tool input.
	ActionPromptDecide = "prompt.decide"
	// ActionPromptExpire: actor "primary", detail {"prompt": id, "kind", "reason"}.
	ActionPromptExpire = "prompt.expire"
	// ActionPermissionAutoAllow: a permission request answered by an allow-list without
	// asking; actor "primary", subject the conversation, detail {"tool_name", "scope",
	// "granted_by", "granted_by_prompt", "agent", "response_id", "call_id", "tool_use_id"}.
	ActionPermissionAutoAllow = "permission.auto_allow"
	// ActionPermissionRevoke: an operator removed an allowance; detail {"tool_name", "scope",
	// "granted_by"}.
	ActionPermissionRevoke = "permission.revoke"
)

// PromptSubject is the audit subject (and live-feed subject) of a prompt.
func PromptSubject(id int64) string { return "prompt/" + strconv.FormatInt(id, 10) }

// NewPrompt is a prompt to save. Texts are stored as given: callers trim them and apply
// defaults first.
type NewPrompt struct {
	Kind PromptKind
	// Channel (required) and Thread name the conversation whose operators decide.
	Channel, Thread string
	// Who asked, and through which response and call.
	Requester, Agent, ResponseID, CallID string
	// An approval's texts: Details 1..MaxPromptDetails, Title 1..MaxPromptTitle, labels
	// 1..MaxPromptLabel characters. Empty for a permission prompt.
	Title, Details, ApproveLabel, DenyLabel string
	// A permission prompt's tool (ToolName 1..MaxToolName characters, ToolUseID at most
	// MaxToolName) and the masked copy of its input (any JSON value, required). Empty for an
	// approval.
	ToolName, ToolUseID string
	MaskedInput         json.RawMessage
	// Deadline is when the caller stops waiting; required.
	Deadline time.Time
}

// Prompt is a stored prompt.
type Prompt struct {
	ID   int64
	Kind PromptKind

	Channel, Thread, Requester, Agent, ResponseID, CallID string

	Title, Details, ApproveLabel, DenyLabel string // approval

	ToolName, ToolUseID string
	MaskedInput         json.RawMessage // permission: the masked copy only

	Status              PromptStatus
	CreatedAt, Deadline time.Time
	// DecidedBy is the operator who decided (empty while pending and when expired);
	// DecidedAt is when it left pending (decided or expired).
	DecidedBy string
	DecidedAt time.Time
	// Decision is one of the Decision constants; empty while pending or when expired.
	Decision string
	// Feedback is the deny reason, the comment, or why it expired.
	Feedback string
	// ParkedJob is the agent job parked on this permission prompt (zero: none). A parked job's
	// prompt outlives its call and restarts, and its decision resumes the job.
	ParkedJob int64
}

// PromptFilter selects prompts; empty fields match everything.
type PromptFilter struct {
	Status PromptStatus
	Kind   PromptKind
	// Thread is compared only when Channel is set (an empty thread is a channel's main
	// timeline).
	Channel, Thread string
	// BeforeID, when positive, returns only older records (smaller ids): the id of the last
	// record of the previous page.
	BeforeID int64
	// Limit is at most 1000; zero means 100.
	Limit int
}

// AllowanceFilter selects permission allowances; empty fields match everything.
type AllowanceFilter struct {
	// Thread is compared only when Channel is set (an empty thread is a channel's main
	// timeline).
	Channel, Thread string
	ToolName        string
	// After, when set, returns only the allowances after it in the list's order: the
	// position of the last allowance of the previous page.
	After AllowancePosition
	// Limit is at most 1000; zero means 100.
	Limit int
}

// The scopes of a permission allowance.
const (
	// AllowThread lasts while the primary that granted it runs.
	AllowThread = "thread"
	// AllowConversation is kept until removed, across restarts.
	AllowConversation = "conversation"
)

// PermissionAllowance lets a tool be used in a conversation without asking.
type PermissionAllowance struct {
	Channel, Thread, ToolName string
	// Scope is AllowThread or AllowConversation.
	Scope     string
	GrantedBy string
	GrantedAt time.Time
	// PromptID is the prompt whose decision granted it.
	PromptID int64
}

// PermissionUse is a permission request checked against the allow-lists.
type PermissionUse struct {
	Channel, Thread, ToolName string
	// Recorded in the audit entry of an allowed use.
	Agent, ResponseID, CallID, ToolUseID string
}
