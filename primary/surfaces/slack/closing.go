package slack

import "time"

// Outcome is how a card was settled.
type Outcome string

// The outcomes a closed card shows.
const (
	OutcomeApproved  Outcome = "approved"
	OutcomeDenied    Outcome = "denied"
	OutcomeAnswered  Outcome = "answered"
	OutcomeExpired   Outcome = "expired"
	OutcomeCancelled Outcome = "cancelled"
	OutcomeFinished  Outcome = "finished"
)

// outcomeLabels are the words and emoji of the closing line.
var outcomeLabels = map[Outcome]string{
	OutcomeApproved:  ":white_check_mark: Approved",
	OutcomeDenied:    ":x: Denied",
	OutcomeAnswered:  ":memo: Answered",
	OutcomeExpired:   ":hourglass: Expired",
	OutcomeCancelled: ":no_entry_sign: Cancelled",
	OutcomeFinished:  ":checkered_flag: Finished",
}

// Closing is how, by whom and when a card was settled. Rendering depends only on its fields, so
// closing a card twice with the same Closing reads the same.
type Closing struct {
	How Outcome
	// ByUserID is the Slack user who decided, shown as a mention; it must look like a Slack user
	// id (U… or W…), anything else is shown as plain text.
	ByUserID string
	// ByName names who decided on another surface or in turncli; used when ByUserID is empty.
	ByName string
	At     time.Time
	// Note is an untrusted free text such as a denial reason.
	Note string
}
