// Package matrix is turncli's Matrix surface at the client level: it posts the items people
// must see and answer (approvals, permission prompts, question forms, plan snapshots, reports)
// as messages in a conversation's Matrix thread, closes a card by editing it with who decided,
// how and when, and reads the answers back from /sync: reactions, replies and MindRoom's
// io.mindroom.tool_approval_response events on a card, and "!mode" commands.
//
// It owns its own small vocabulary (Card, Closing, Answer, ModeCommand) and knows nothing of
// the thread feed, the store or who may decide: the caller maps its items onto a Card, keeps
// the event ids Post returns, checks the sender of every Answer against the linked accounts
// and records the decision. Everything a card carries that an agent, a tool or a job produced
// is untrusted text and is escaped wherever it is shown.
//
// Approval cards that carry MindRoom's fields are sent as MindRoom's own
// io.mindroom.tool_approval event, so MindRoom's clients show their buttons; every other card
// is an m.room.message. Every send uses a transaction id derived from the item key, what is
// sent and its version, so a send retried against the same homeserver run is not posted twice.
package matrix
