package matrix

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"
)

// handle turns one timeline event into an Answer or a ModeCommand for the Receiver, or
// nothing. The bot's own events, redacted events and edits are never answers: an edit of an
// old reply must not decide anything again.
func (l *Listener) handle(ctx context.Context, evt *event.Event) error {
	if evt.Sender == l.bot || evt.StateKey != nil || evt.Unsigned.RedactedBecause != nil {
		return nil
	}
	switch evt.Type.Type {
	case event.EventReaction.Type:
		return l.onReaction(ctx, evt)
	case event.EventMessage.Type:
		return l.onMessage(ctx, evt)
	case ToolApprovalResponseType.Type:
		return l.onToolApprovalResponse(ctx, evt)
	}
	return nil
}

// onReaction: ✅ or 👍 on a card approves it (or allows once), ❌ or 👎 denies it.
func (l *Listener) onReaction(ctx context.Context, evt *event.Event) error {
	var content struct {
		RelatesTo event.RelatesTo `json:"m.relates_to"`
	}
	if json.Unmarshal(evt.Content.VeryRaw, &content) != nil {
		return nil
	}
	target := content.RelatesTo.GetAnnotationID()
	if target == "" {
		return nil
	}
	var decision func(cardMark) Decision
	switch reactionSign(content.RelatesTo.Key) {
	case 1:
		decision = yes
	case -1:
		decision = no
	default:
		return nil
	}
	return l.answer(ctx, evt, target, GestureReaction, "", decision)
}

// onMessage reads a mode command, or a reply to a card: an answer to a question form, a
// comment where the card takes one, else a denial with the text as its reason. Only a true
// reply counts: a thread message's fallback m.in_reply_to points at the thread's latest
// event, which may be a card, and chat in the thread must stay chat (as in MindRoom).
func (l *Listener) onMessage(ctx context.Context, evt *event.Event) error {
	var content event.MessageEventContent
	if json.Unmarshal(evt.Content.VeryRaw, &content) != nil {
		return nil
	}
	if content.RelatesTo.GetReplaceID() != "" || content.MsgType != event.MsgText {
		return nil
	}
	if agent, mode, ok := parseMode(content.Body); ok {
		return l.recv.ModeCommand(ctx, ModeCommand{
			Agent: agent, Mode: mode, Malformed: agent == "",
			Sender: evt.Sender, Room: evt.RoomID, Thread: content.RelatesTo.GetThreadParent(), EventID: evt.ID,
		})
	}
	target := content.RelatesTo.GetNonFallbackReplyTo()
	if target == "" {
		return nil
	}
	text := strings.TrimSpace(event.TrimReplyFallbackText(content.Body))
	return l.answer(ctx, evt, target, GestureReply, text, replied)
}

// onToolApprovalResponse reads MindRoom's response event: status approved or denied, an
// optional reason (denial_reason in older clients), and the card in m.in_reply_to only, as
// MindRoom reads it.
func (l *Listener) onToolApprovalResponse(ctx context.Context, evt *event.Event) error {
	var content struct {
		Status       string           `json:"status"`
		Reason       *string          `json:"reason"`
		DenialReason *string          `json:"denial_reason"`
		RelatesTo    *event.RelatesTo `json:"m.relates_to"`
	}
	if json.Unmarshal(evt.Content.VeryRaw, &content) != nil {
		return nil
	}
	target := content.RelatesTo.GetReplyTo()
	if target == "" {
		return nil
	}
	var text string
	switch {
	case content.Reason != nil:
		text = *content.Reason
	case content.DenialReason != nil:
		text = *content.DenialReason
	}
	switch content.Status {
	case "approved":
		return l.answer(ctx, evt, target, GestureMindRoomResponse, "", yes)
	case "denied":
		return l.answer(ctx, evt, target, GestureMindRoomResponse, strings.TrimSpace(text), no)
	}
	return nil
}

// yes, no and replied choose the decision a gesture makes on a card with these actions, or
// "" when the card does not take it.
func yes(m cardMark) Decision { return first(m, DecisionApprove, DecisionAllowOnce) }
func no(m cardMark) Decision  { return first(m, DecisionDeny) }
func replied(m cardMark) Decision {
	return first(m, DecisionAnswer, DecisionComment, DecisionDeny)
}

func first(m cardMark, choices ...Decision) Decision {
	for _, d := range choices {
		if slices.Contains(m.Actions, d) {
			return d
		}
	}
	return ""
}

// answer hands the Receiver the answer evt gives to the card target, if target is one of the
// bot's cards and it takes the decision.
func (l *Listener) answer(ctx context.Context, evt *event.Event, target id.EventID, g Gesture, text string, decide func(cardMark) Decision) error {
	card, err := l.card(ctx, evt.RoomID, target)
	if err != nil || card == nil {
		return err
	}
	d := decide(card.mark)
	if d == "" {
		return nil
	}
	return l.recv.Answer(ctx, Answer{
		Key: card.mark.Key, CardEvent: target, Room: evt.RoomID, Thread: card.thread,
		Sender: evt.Sender, Decision: d, Text: text, Gesture: g, EventID: evt.ID,
		At: time.UnixMilli(evt.Timestamp).UTC(),
	})
}
