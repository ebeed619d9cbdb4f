package matrix

import (
	"slices"
	"time"

	"maunium.net/go/mautrix/id"
)

// Kind is what a card asks of people.
type Kind string

// The kinds of card.
const (
	KindCommandApproval  Kind = "command_approval"  // a background command waiting for an admin
	KindPlanApproval     Kind = "plan_approval"     // request_approval: approve, deny or comment
	KindPermissionPrompt Kind = "permission_prompt" // an engine's tool use: allow or deny
	KindCallApproval     Kind = "call_approval"     // an Agent CLI call waiting for approval
	KindQuestionForm     Kind = "question_form"     // ask_questions: answered by the requester
	KindPlanSnapshot     Kind = "plan_snapshot"     // report_progress: shown, not decided
	KindReport           Kind = "report"            // a job's or agent's report: shown, not decided
)

// Decision is what a person did with a card, and what a card allows (Card.Actions).
type Decision string

// The decisions.
const (
	DecisionApprove           Decision = "approve"
	DecisionDeny              Decision = "deny"
	DecisionComment           Decision = "comment" // request changes: not approved, with text
	DecisionAllowOnce         Decision = "allow_once"
	DecisionAllowThread       Decision = "allow_thread"
	DecisionAllowConversation Decision = "allow_conversation"
	DecisionAnswer            Decision = "answer" // a reply to a question form, its text the answer
)

// Card is one item shown in a conversation's thread. The caller builds it from its own item;
// every text field except Key is untrusted and is escaped wherever it is shown.
type Card struct {
	// Key names the item, for example "approval/7"; it comes back in every Answer and is part
	// of every transaction id, so it must be stable for the item's life.
	Key string
	// Version is the item's revision; a card posted again after the item changed takes a new
	// version and so a new transaction id.
	Version int
	Kind    Kind
	Room    id.RoomID
	Thread  id.EventID // the thread's root event
	Title   string
	Lines   []string // the body, one paragraph each
	// Text is what is decided (a command, a tool's input), shown verbatim in a code block;
	// TextTruncated says the card shows only a preview of it.
	Text          string
	TextTruncated bool
	// Actions are the decisions the card offers; an answer outside them is not an answer.
	Actions []Decision
	// Tool, when set, carries MindRoom's approval fields: the card is then sent as an
	// io.mindroom.tool_approval event.
	Tool *ToolApproval
}

// ToolApproval is the request MindRoom's clients render as an approval card with buttons
// (io.mindroom.tool_approval). Field names follow MindRoom's event content; its clients
// render a card only with ApprovalID, ToolName, AgentName, RequestedAt and ExpiresAt set, and
// show it expired once ExpiresAt has passed. A zero time or empty id is left out of the
// event. The card's thread root is MindRoom's thread_id, and its state (pending until Close)
// its status.
type ToolApproval struct {
	ApprovalID string
	ToolCallID string
	ToolName   string
	// Arguments is the redacted preview of the tool's arguments, a JSON object;
	// ArgumentsTruncated says values were cut or left out of it.
	Arguments          map[string]any
	ArgumentsTruncated bool
	RequesterID        id.UserID
	ApproverUserID     id.UserID
	AgentName          string
	RequestedAt        time.Time
	ExpiresAt          time.Time
}

// Allows reports whether the card offers the decision d.
func (c Card) Allows(d Decision) bool {
	return slices.Contains(c.Actions, d)
}

// How is the way an item ended.
type How string

// The ways an item ends.
const (
	HowApproved  How = "approved"
	HowDenied    How = "denied"
	HowAnswered  How = "answered"
	HowExpired   How = "expired"
	HowCancelled How = "cancelled"
	HowFinished  How = "finished"
)

// Closing is how, by whom and when an item ended, written into its card by Close. The
// caller supplies At, so closing the same item twice writes the same card.
type Closing struct {
	How  How
	By   string // who decided: a Matrix user id or an operator's name; empty when no one did
	At   time.Time
	Note string // a reason, comment or outcome; untrusted
}
