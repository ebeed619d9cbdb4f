package threadfeed

import (
	"time"

	"github.com/turncli/turncli/primary/store"
)

// Kind is what an item is, as people see it.
type Kind string

// The kinds of items.
const (
	KindCommandApproval Kind = "command_approval" // a background command waiting for an admin
	KindPlanApproval    Kind = "plan_approval"    // request_approval
	KindPermission      Kind = "permission"       // permission_prompt
	KindCallApproval    Kind = "call_approval"    // a CLI call that needs confirmation
	KindQuestionForm    Kind = "question_form"    // ask_questions
	KindPlanSnapshot    Kind = "plan_snapshot"    // report_progress
	KindJob             Kind = "job"              // a background command running or ended
	KindAgent           Kind = "agent"            // a background agent running or ended
)

// State says whether people can still act on an item.
type State string

// The states of an item.
const (
	StateOpen   State = "open"
	StateClosed State = "closed"
)

// Action is what a person may do with an open item: the operator API's decisions, and a
// form's three moves.
type Action string

// The actions. Which an item takes depends on its kind (actionsOf); who may take them is the
// engines' rule (only an admin approves a command or a call, or allows a tool for a whole
// conversation; only the requester answers a form).
const (
	ActionApprove           Action = store.DecisionApprove
	ActionDeny              Action = store.DecisionDeny
	ActionComment           Action = store.DecisionComment
	ActionAllowOnce         Action = store.DecisionAllowOnce
	ActionAllowThread       Action = store.DecisionAllowThread
	ActionAllowConversation Action = store.DecisionAllowConversation
	ActionSaveDraft         Action = "save_draft"
	ActionSubmit            Action = "submit"
	ActionCancel            Action = "cancel"
)

// How is how an item closed.
type How string

// The ways an item closes.
const (
	ClosedDecided   How = "decided"   // approved, denied or allowed (Closing.Decision says which)
	ClosedAnswered  How = "answered"  // a form submitted by its requester
	ClosedExpired   How = "expired"   // a prompt or call nobody decided in time, or a prompt left by a restart
	ClosedCancelled How = "cancelled" // a form withdrawn, or its thread stopped
	ClosedFinished  How = "finished"  // a job or agent ended (Closing.Note is its outcome)
)

// Item is one item of a conversation as it stands when an event about it is read. Every text
// in it was redacted of live secrets; texts agents, tools and jobs wrote are untrusted and
// must be shown as text, never interpreted.
type Item struct {
	// EventID and At are the event's; Change is what it told.
	EventID int64
	At      time.Time
	Change  store.ThreadChange

	Channel, Thread string
	Kind            Kind
	// Key names the item across its events: "<store kind>/<id>", as in "approval/12" (a
	// plan snapshot's id is its response's).
	Key   string
	State State

	// Title is the item's heading: a command's or job's label, a plan approval's or form's
	// or plan's title, a permission prompt's tool, a call's "toolkit.function".
	Title string
	// Text is what a person decides on or reads: the command, the plan's details, the
	// permission input (masked), the call's arguments, the form's questions (JSON), the plan's
	// steps (JSON), the job's command.
	Text string
	// Preview is Text cut to the reader's card size; PreviewTruncated says it was cut. An
	// approval of a truncated preview is refused unless the person saw the full text.
	Preview          string
	PreviewTruncated bool

	// Workdir is where a command would run (command approvals).
	Workdir string
	// ApproveLabel and DenyLabel are a plan approval's button labels.
	ApproveLabel, DenyLabel string
	// Requester is who the item serves: the author of a command, the requester of a prompt,
	// call or form; Agent the agent that asked.
	Requester, Agent string
	// Presentation ("auto", "message" or "modal") and Revision are a form's: a draft or
	// submit names the revision it saw.
	Presentation string
	Revision     int64
	// Comments are a command approval's, oldest first.
	Comments []Comment
	// OpenedAt is when the item was asked for or started (zero for a plan snapshot); Deadline
	// when a prompt expires unanswered (zero for an item that never expires).
	OpenedAt, Deadline time.Time

	// Actions are what a person may do while the item is open; none once closed.
	Actions []Action
	// Closing says how, by whom and when the item closed; nil while it is open.
	Closing *Closing
	// Report is the size of a finished job's or agent's report, which follows the item in
	// chunks; zero chunks when it has none.
	Report Report
}

// Comment is one comment on a command approval.
type Comment struct {
	By   string
	Text string
	At   time.Time
}

// Closing is how an item closed.
type Closing struct {
	How How
	// Decision is the decision taken (an Action such as approve, deny, allow_once) when How
	// is ClosedDecided.
	Decision Action
	// By is who closed it: an operator, a requester, or "primary" (a restart, a stopped
	// thread); empty when nobody did (an expiry, a job's end).
	By string
	// Via is the chat account the decision was relayed from; nil when it was taken on the
	// operator API or the dashboard.
	Via *store.Via
	At  time.Time
	// Note is a denial's reason, a comment, why it expired, how an approved command fared,
	// or a job's outcome.
	Note string
}

// Report is the size of a job's report in the reader's chunks.
type Report struct {
	Chunks int
	Bytes  int
}

// Chunk is one piece of a job's or agent's report, in order: Index counts from 0 to Count-1.
// Joined, the chunks are the report, redacted, each cut on a UTF-8 boundary.
type Chunk struct {
	Key          string // the item's key
	Index, Count int
	Text         string
}

// Message is what a reader reads: an item, or a chunk of the report that follows it; Cursor
// is where to resume after it.
type Message struct {
	Item   *Item
	Chunk  *Chunk
	Cursor Cursor
}
