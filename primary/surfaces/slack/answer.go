package slack

// Gesture is how a person answered.
type Gesture string

// The gestures an Answer comes from.
const (
	GestureButton          Gesture = "button"
	GestureModalSubmission Gesture = "modal_submission"
)

// Answer is a person's answer to a card, from a signed Slack request. It says who answered and
// what; whether that person may answer and whether the card's version is still current is for
// the caller's Decide to judge.
type Answer struct {
	ItemKey string
	// Version is the card version the person saw (from the button or the modal's metadata).
	Version int64
	UserID  string // Slack user id
	TeamID  string // Slack workspace (team) id
	// Channel and MessageTS locate the card the person answered; refusals are posted there.
	Channel   string
	MessageTS string
	Decision  Action
	// Text is the comment of an ActionComment.
	Text string
	// Form holds a form submission's answers by question id: one value for a text or single
	// choice question, the chosen values for a multi choice one; unanswered questions are absent.
	Form map[string][]string
	// Revision is the draft revision the submitted form was shown with.
	Revision int64
	Gesture  Gesture
}
