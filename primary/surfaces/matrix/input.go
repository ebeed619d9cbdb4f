package matrix

import (
	"time"

	"maunium.net/go/mautrix/id"
)

// Gesture is how a person answered a card.
type Gesture string

// The gestures the Listener reads.
const (
	GestureReaction         Gesture = "reaction"          // an m.annotation on the card
	GestureReply            Gesture = "reply"             // a message replying to the card
	GestureMindRoomResponse Gesture = "mindroom_response" // io.mindroom.tool_approval_response
)

// Answer is one person's answer to a card, as read from the room. The Listener neither
// checks who may decide nor knows whether the item is still open: the caller does both,
// with Sender and Key, and answers a refusal with Surface.Notice.
type Answer struct {
	Key       string     // the card's item key
	CardEvent id.EventID // the card's event
	Room      id.RoomID
	Thread    id.EventID // the card's thread root
	Sender    id.UserID
	Decision  Decision
	Text      string // a reason, comment or answer; untrusted
	Gesture   Gesture
	EventID   id.EventID // the event that answered, unique per answer
	At        time.Time  // the homeserver's timestamp of that event
}

// Modes a "!mode" command may set: the agent's CLI shell mode.
const (
	ModeMinimal  = "minimal"
	ModeStandard = "standard"
)

// ModeCommand is a "!mode <agent> minimal|standard" message. Malformed is set when the
// message starts with "!mode" but does not follow that form; Agent and Mode are then empty.
type ModeCommand struct {
	Agent     string
	Mode      string
	Malformed bool
	Sender    id.UserID
	Room      id.RoomID
	Thread    id.EventID // the thread root when sent in a thread, else empty
	EventID   id.EventID
}
