package slack

import (
	"errors"
	"fmt"
)

// Kind says what a card asks or shows; it chooses the card's fallback notification text.
type Kind string

// The kinds of card a thread carries.
const (
	KindApproval     Kind = "approval"      // a background command waiting for approval
	KindPlanApproval Kind = "plan_approval" // a plan waiting for approval
	KindPermission   Kind = "permission"    // a tool permission prompt
	KindCLICall      Kind = "cli_call"      // an Agent CLI call waiting for approval
	KindQuestion     Kind = "question"      // a question form
	KindPlan         Kind = "plan"          // a plan snapshot, shown only
	KindReport       Kind = "report"        // a job or agent report, shown only
)

// Action is a gesture a card offers, and the decision an Answer carries.
type Action string

// The actions a card may offer. ActionAnswer opens the card's question form; ActionComment opens
// a modal for a comment text.
const (
	ActionApprove           Action = "approve"
	ActionDeny              Action = "deny"
	ActionComment           Action = "comment"
	ActionAllowOnce         Action = "allow_once"
	ActionAllowThread       Action = "allow_thread"
	ActionAllowConversation Action = "allow_conversation"
	ActionAnswer            Action = "answer"
)

// Card is one item a person must see, and usually answer, in a Slack thread. Every text in it
// (title, body, decidable text, questions, options) is untrusted and is escaped when rendered.
type Card struct {
	// ItemKey names the item across surfaces, for example "approval/7".
	ItemKey string
	Kind    Kind
	// Version changes whenever the item changes; buttons carry it, so a click on an older
	// rendering of the card is recognisable as stale.
	Version int64
	// DeliveryID is the caller's id of this delivery, stored in the message metadata so that
	// FindCard can find the message after a crash between posting and recording.
	DeliveryID string
	Channel    string // Slack channel id
	ThreadTS   string // ts of the thread's root message
	Title      string
	Body       []string
	// Decidable is the text being decided (a command, a call and its arguments), shown as code.
	Decidable string
	// PreviewTruncated says Decidable is already a truncated preview of a longer text.
	PreviewTruncated bool
	Actions          []Action
	// Form is the question form of a question card; ActionAnswer needs it.
	Form *Form
}

// Presentation is how a question form asks to be shown. Slack messages cannot submit several
// inputs at once, so both presentations are answered in a modal: "message" lists the questions
// on the card, "modal" shows only the title and the Answer button.
type Presentation string

// The presentations of a question form.
const (
	PresentationMessage Presentation = "message"
	PresentationModal   Presentation = "modal"
)

// Form is a question form and the revision of its saved draft.
type Form struct {
	Questions    []Question
	Presentation Presentation
	// Revision is the draft revision the answers are based on; a submission carries it back.
	Revision int64
}

// QuestionKind is the kind of input a question takes.
type QuestionKind string

// The kinds of question.
const (
	QuestionText   QuestionKind = "text"
	QuestionSingle QuestionKind = "single"
	QuestionMulti  QuestionKind = "multi"
)

// Question is one question of a form.
type Question struct {
	ID       string // unique within the form; the answers are keyed by it
	Prompt   string
	Kind     QuestionKind
	Options  []Option // for single and multi choice
	Required bool
}

// Option is one choice of a single or multi choice question.
type Option struct {
	Label string
	Value string
}

// ErrInvalidCard is returned by Post and Close for a card that cannot be rendered.
var ErrInvalidCard = errors.New("invalid card")

// validate checks what the rendering and the button values depend on.
func (c Card) validate() error {
	switch {
	case c.ItemKey == "":
		return fmt.Errorf("%w: no item key", ErrInvalidCard)
	case kindLeads[c.Kind] == "":
		return fmt.Errorf("%w: %s has the unknown kind %q", ErrInvalidCard, c.ItemKey, c.Kind)
	case c.Channel == "" || c.ThreadTS == "":
		return fmt.Errorf("%w: %s has no channel or thread", ErrInvalidCard, c.ItemKey)
	case len(ref{ItemKey: c.ItemKey, Version: c.Version}.String()) > maxButtonValue:
		return fmt.Errorf("%w: item key of %d bytes is too long for a button", ErrInvalidCard, len(c.ItemKey))
	}
	for _, a := range c.Actions {
		if _, ok := buttonLabels[a]; !ok {
			return fmt.Errorf("%w: %s offers the unknown action %q", ErrInvalidCard, c.ItemKey, a)
		}
		if a == ActionAnswer && (c.Form == nil || len(c.Form.Questions) == 0) {
			return fmt.Errorf("%w: %s offers an answer but has no questions", ErrInvalidCard, c.ItemKey)
		}
	}
	if c.Form != nil {
		if len(c.Form.Questions) > maxQuestions {
			return fmt.Errorf("%w: %s has %d questions, at most %d fit a modal", ErrInvalidCard, c.ItemKey, len(c.Form.Questions), maxQuestions)
		}
		seen := map[string]bool{}
		for _, q := range c.Form.Questions {
			if q.ID == "" || seen[q.ID] {
				return fmt.Errorf("%w: %s has an empty or repeated question id %q", ErrInvalidCard, c.ItemKey, q.ID)
			}
			seen[q.ID] = true
		}
	}
	return nil
}
