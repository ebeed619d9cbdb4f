package store

import (
	"context"
	"time"
)

// ThreadEvents is the durable feed of what people must see in a conversation's thread: each
// item (an approval, a prompt, a call approval, a question form, a plan snapshot, a job) as it
// opens, changes and closes, in the order the changes committed. An event names its item and
// what happened; a reader renders the item as it now stands. Events are appended by the same
// transaction as the change they tell of, so the feed never misses a change, across restarts,
// and never tells of one that did not commit. A change told twice is possible (a job's end
// reported twice closes it once and is told twice), and harmless to a reader that renders the
// item as it stands.
type ThreadEvents interface {
	// ListThreadEvents returns the events matching f with an id above f.After, oldest first.
	// Ids grow in commit order, so a reader that has read up to an id never misses an event
	// that commits later.
	ListThreadEvents(ctx context.Context, f ThreadEventFilter) ([]ThreadEvent, error)
}

// ThreadItemKind is what kind of item an event is about.
type ThreadItemKind string

const (
	ThreadApproval     ThreadItemKind = "approval"      // a background command's approval
	ThreadPrompt       ThreadItemKind = "prompt"        // a plan approval or a permission prompt
	ThreadCallApproval ThreadItemKind = "call_approval" // a CLI call that needs confirmation
	ThreadQuestion     ThreadItemKind = "question"      // a question form
	ThreadProgress     ThreadItemKind = "progress"      // a response's plan snapshot
	ThreadJob          ThreadItemKind = "job"           // a background job or agent
)

// ThreadChange is what happened to the item.
type ThreadChange string

const (
	// ThreadOpened: the item appeared; people may act on it.
	ThreadOpened ThreadChange = "opened"
	// ThreadUpdated: the item changed and stays (a comment, a draft, a new snapshot, an
	// approved command's outcome).
	ThreadUpdated ThreadChange = "updated"
	// ThreadClosed: the item was decided, answered, expired, cancelled or ended; its record
	// says by whom and how. Nobody can act on it any more.
	ThreadClosed ThreadChange = "closed"
)

// ThreadEvent is one change of one item in a conversation.
type ThreadEvent struct {
	ID              int64
	At              time.Time
	Channel, Thread string
	Kind            ThreadItemKind
	// Key is the item's id (a response id for a plan snapshot).
	Key    string
	Change ThreadChange
}

// ThreadEventFilter selects events: those after an id, of one conversation when Channel is
// set (Thread compared with it, empty being the channel's main timeline).
type ThreadEventFilter struct {
	After           int64
	Channel, Thread string
	// Limit is at most 1000; zero means 100.
	Limit int
}

// NewThreadEvent is an event a transition appends; the driver takes the item's conversation
// from its record.
type NewThreadEvent struct {
	Kind   ThreadItemKind
	Key    string
	Change ThreadChange
}
