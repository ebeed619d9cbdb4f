package matrix

import (
	"maps"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"
)

// Event types this package sends and reads besides the standard ones. The names are
// MindRoom's, so its clients render and answer turncli's approval cards.
var (
	ToolApprovalType         = event.Type{Type: "io.mindroom.tool_approval", Class: event.MessageEventType}
	ToolApprovalResponseType = event.Type{Type: "io.mindroom.tool_approval_response", Class: event.MessageEventType}
)

// cardKey is the content key under which every card carries what the Listener needs to read
// an answer to it: its item key, kind and actions. Only cards the bot itself sent count.
const cardKey = "io.turncli.card"

// cardMark is the content under cardKey.
type cardMark struct {
	Key     string     `json:"key"`
	Kind    Kind       `json:"kind"`
	Version int        `json:"version"`
	Actions []Decision `json:"actions"`
	Closed  How        `json:"closed,omitempty"`
}

func markOf(card Card, c *Closing) cardMark {
	m := cardMark{Key: card.Key, Kind: card.Kind, Version: card.Version, Actions: card.Actions}
	if m.Actions == nil {
		m.Actions = []Decision{}
	}
	if c != nil {
		m.Closed = c.How
		m.Actions = []Decision{} // a closed card offers nothing
	}
	return m
}

// cardEvent is the type and content of a card, open (c nil) or closed, without its relation.
func cardEvent(card Card, c *Closing) (event.Type, map[string]any) {
	r := renderCard(card, c)
	content := map[string]any{
		"body":           r.body(),
		"format":         event.FormatHTML,
		"formatted_body": r.formattedBody(),
		// Empty mentions: nothing in the card's untrusted text may ping a user or the room.
		"m.mentions": map[string]any{},
		cardKey:      markOf(card, c),
	}
	if card.Tool == nil {
		content["msgtype"] = event.MsgText
		return event.EventMessage, content
	}
	addToolApproval(content, card, c)
	return ToolApprovalType, content
}

// addToolApproval writes MindRoom's approval fields into content. MindRoom's fallback body
// replaces the card's: its clients and its own bot read that text.
func addToolApproval(content map[string]any, card Card, c *Closing) {
	t := card.Tool
	status := mindRoomStatus(c)
	args := t.Arguments
	if args == nil {
		args = map[string]any{}
	}
	content["msgtype"] = ToolApprovalType.Type
	content["body"] = mindRoomBody[status] + t.ToolName
	content["status"] = status
	content["approval_id"] = t.ApprovalID
	content["tool_name"] = t.ToolName
	content["arguments"] = args
	content["agent_name"] = t.AgentName
	content["thread_id"] = card.Thread
	setIf(content, "tool_call_id", t.ToolCallID)
	setIf(content, "requester_id", string(t.RequesterID))
	setIf(content, "approver_user_id", string(t.ApproverUserID))
	if !t.RequestedAt.IsZero() {
		content["requested_at"] = mindRoomTime(t.RequestedAt)
	}
	if !t.ExpiresAt.IsZero() {
		content["expires_at"] = mindRoomTime(t.ExpiresAt)
	}
	if t.ArgumentsTruncated || card.TextTruncated {
		// No full arguments travel with the card, so MindRoom's clients must not offer to
		// approve what nobody could read; MindRoom marks such a card the same way.
		content["arguments_truncated"] = true
		content["approvable"] = false
	}
	if c == nil {
		return
	}
	content["resolved_at"] = mindRoomTime(c.At)
	if c.By != "" {
		content["resolved_by"] = c.By
	} else {
		content["resolved_by"] = nil // MindRoom's value when no one decided (expiry)
	}
	setIf(content, "resolution_reason", c.Note)
}

func setIf(content map[string]any, key, value string) {
	if value != "" {
		content[key] = value
	}
}

// MindRoom's statuses: pending, approved, denied, expired. An item that ended any other way
// is expired to MindRoom's clients: what they show as no longer actionable.
func mindRoomStatus(c *Closing) string {
	switch {
	case c == nil:
		return "pending"
	case c.How == HowApproved:
		return "approved"
	case c.How == HowDenied:
		return "denied"
	}
	return "expired"
}

var mindRoomBody = map[string]string{
	"pending":  "🔒 Approval required: ",
	"approved": "Approved: ",
	"denied":   "Denied: ",
	"expired":  "Expired: ",
}

// threadRelation puts an event in the thread under root. is_falling_back with an
// m.in_reply_to the root lets clients without threads show it as a reply to the root.
func threadRelation(root id.EventID) map[string]any {
	return map[string]any{
		"rel_type":        event.RelThread,
		"event_id":        root,
		"is_falling_back": true,
		"m.in_reply_to":   map[string]any{"event_id": root},
	}
}

// replyRelation makes an event a true reply to replyTo (not a thread fallback), inside the
// thread under root when root is set.
func replyRelation(root, replyTo id.EventID) map[string]any {
	rel := map[string]any{"m.in_reply_to": map[string]any{"event_id": replyTo}}
	if root != "" {
		rel["rel_type"] = event.RelThread
		rel["event_id"] = root
		rel["is_falling_back"] = false
	}
	return rel
}

// editOf is the m.replace edit of the event target to newContent. The new content travels in
// m.new_content; the top level repeats it for clients that do not apply edits, with the "* "
// fallback prefix on a message (MindRoom's cards repeat their fields unprefixed).
func editOf(typ event.Type, newContent map[string]any, target id.EventID) map[string]any {
	edit := maps.Clone(newContent)
	if typ == event.EventMessage {
		edit["body"] = "* " + newContent["body"].(string)
		edit["formatted_body"] = "* " + newContent["formatted_body"].(string)
	}
	edit["m.new_content"] = newContent
	edit["m.relates_to"] = map[string]any{"rel_type": event.RelReplace, "event_id": target}
	return edit
}
