package matrix

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"maunium.net/go/mautrix/id"

	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/surfaces"
	"github.com/turncli/turncli/primary/threadfeed"
)

// SurfaceName is the Matrix surface's name in identity links and its saved records.
const SurfaceName = "matrix"

// Show implements surfaces.Surface: the item's card posted in its thread, edited as the item
// changes, closed when it closes. The card's transaction ids depend only on the item and the
// event shown, so a delivery retried after a crash sends nothing twice to the same
// homeserver run; a card is looked for in its thread before it is posted, for a homeserver
// that restarted meanwhile.
func (f *FeedSurface) Show(ctx context.Context, it threadfeed.Item, shown store.SurfaceCard) (string, error) {
	card := cardOfItem(it)
	if shown.MessageID == "" {
		// A homeserver remembers transaction ids only while it runs: a card posted before a
		// crash of both is found in its thread rather than posted again.
		evt, err := f.s.Posted(ctx, card)
		if err == nil && evt == "" {
			evt, err = f.s.Post(ctx, card)
		}
		return string(evt), err
	}
	// Each event's edit is its own: a closed item still changes (an approved command's
	// outcome), and the event names the change, so an edit resent after a crash is the one
	// sent before.
	cardID := id.EventID(shown.MessageID)
	card.Version = int(it.EventID)
	if it.Closing != nil {
		_, err := f.s.Close(ctx, card, cardID, closingOf(*it.Closing))
		return shown.MessageID, err
	}
	_, err := f.s.Update(ctx, card, cardID)
	return shown.MessageID, err
}

// Report implements surfaces.Surface: one chunk of a report as a message in the card's
// thread, numbered when the report has several.
func (f *FeedSurface) Report(ctx context.Context, card store.SurfaceCard, c threadfeed.Chunk) error {
	text := c.Text
	if c.Count > 1 {
		text = fmt.Sprintf("[%d/%d] %s", c.Index+1, c.Count, c.Text)
	}
	_, err := f.s.PostReport(ctx, Report{Key: c.Key, Room: id.RoomID(card.Room), Thread: id.EventID(card.Thread),
		Chunks: []string{text}, First: c.Index})
	return err
}

// Update edits the open card posted as cardID to show the card as it now is (a new comment, a
// new plan snapshot); card.Version names the change, so each is sent once.
func (s *Surface) Update(ctx context.Context, card Card, cardID id.EventID) (id.EventID, error) {
	if card.Room == "" || card.Thread == "" {
		return "", ErrNoThread
	}
	typ, content := cardEvent(card, nil)
	return s.send(ctx, card.Room, typ, editOf(typ, content, cardID), TxnID(card.Key, "update", card.Version))
}

// kindOfItem is the card kind of each kind of feed item.
var kindOfItem = map[threadfeed.Kind]Kind{
	threadfeed.KindCommandApproval: KindCommandApproval,
	threadfeed.KindPlanApproval:    KindPlanApproval,
	threadfeed.KindPermission:      KindPermissionPrompt,
	threadfeed.KindCallApproval:    KindCallApproval,
	threadfeed.KindQuestionForm:    KindQuestionForm,
	threadfeed.KindPlanSnapshot:    KindPlanSnapshot,
	threadfeed.KindJob:             KindReport,
	threadfeed.KindAgent:           KindReport,
}

// decisionOfAction is the card decision of each feed action a card offers; a form's submit is
// a reply's answer, and its draft and cancel are not offered here.
var decisionOfAction = map[threadfeed.Action]Decision{
	threadfeed.ActionApprove:           DecisionApprove,
	threadfeed.ActionDeny:              DecisionDeny,
	threadfeed.ActionComment:           DecisionComment,
	threadfeed.ActionAllowOnce:         DecisionAllowOnce,
	threadfeed.ActionAllowThread:       DecisionAllowThread,
	threadfeed.ActionAllowConversation: DecisionAllowConversation,
	threadfeed.ActionSubmit:            DecisionAnswer,
}

// cardOfItem is the card of a feed item as it stands.
func cardOfItem(it threadfeed.Item) Card {
	card := Card{Key: it.Key, Kind: kindOfItem[it.Kind], Room: id.RoomID(it.Channel), Thread: id.EventID(it.Thread),
		Title: titleOf(it), Lines: linesOf(it), Text: it.Preview, TextTruncated: it.PreviewTruncated}
	for _, a := range it.Actions {
		if d, ok := decisionOfAction[a]; ok {
			card.Actions = append(card.Actions, d)
		}
	}
	if it.Kind == threadfeed.KindQuestionForm {
		card.Text, card.TextTruncated = "", false // the questions are its lines
	}
	switch it.Kind {
	case threadfeed.KindCallApproval, threadfeed.KindPermission, threadfeed.KindCommandApproval:
		card.Tool = toolApprovalOf(it)
	}
	return card
}

// titleLabels head each kind's card.
var titleLabels = map[threadfeed.Kind]string{
	threadfeed.KindCommandApproval: "Background command waiting for an admin",
	threadfeed.KindPlanApproval:    "Approval requested",
	threadfeed.KindPermission:      "Permission requested",
	threadfeed.KindCallApproval:    "Tool call waiting for approval",
	threadfeed.KindQuestionForm:    "Questions",
	threadfeed.KindPlanSnapshot:    "Plan",
	threadfeed.KindJob:             "Background command",
	threadfeed.KindAgent:           "Background agent",
}

func titleOf(it threadfeed.Item) string {
	if it.Title == "" {
		return titleLabels[it.Kind]
	}
	return titleLabels[it.Kind] + ": " + it.Title
}

// linesOf is what a card says besides its title and decided text; a form's card lists its
// questions too.
func linesOf(it threadfeed.Item) []string {
	lines := surfaces.Lines(it)
	if it.Kind == threadfeed.KindQuestionForm {
		lines = append(lines, questionLines(it.Text)...)
	}
	return lines
}

// questionLines lists a form's questions, with their options, one line each.
func questionLines(questions string) []string {
	var qs []store.Question
	if json.Unmarshal([]byte(questions), &qs) != nil {
		return nil
	}
	lines := make([]string, 0, len(qs))
	for i, q := range qs {
		line := strconv.Itoa(i+1) + ". " + q.Prompt
		if len(q.Options) > 0 {
			labels := make([]string, len(q.Options))
			for j, o := range q.Options {
				labels[j] = o.Label
			}
			line += " (" + strings.Join(labels, " / ") + ")"
		}
		lines = append(lines, line)
	}
	return lines
}

// neverExpires is how far out a card of an approval that never expires says it expires.
const neverExpires = 365 * 24 * time.Hour

// toolApprovalOf is an approval item in MindRoom's terms, so MindRoom's clients render it
// with their buttons. Its arguments are the decided text: a JSON object as it is, any other
// text under "input".
func toolApprovalOf(it threadfeed.Item) *ToolApproval {
	args := map[string]any{}
	if json.Unmarshal([]byte(it.Preview), &args) != nil || it.PreviewTruncated {
		args = map[string]any{"input": it.Preview}
	}
	if it.Workdir != "" {
		args["workdir"] = it.Workdir
	}
	t := &ToolApproval{ApprovalID: it.Key, ToolName: it.Title, Arguments: args, ArgumentsTruncated: it.PreviewTruncated,
		AgentName: it.Agent, RequestedAt: it.OpenedAt, ExpiresAt: it.Deadline}
	if t.ExpiresAt.IsZero() {
		// MindRoom's clients show a card only with an expiry, and show it expired past it; an
		// approval that never expires here is given one far enough out not to matter.
		t.ExpiresAt = it.OpenedAt.Add(neverExpires)
	}
	if strings.HasPrefix(it.Requester, "@") {
		t.RequesterID = id.UserID(it.Requester)
	}
	return t
}

// closingOf is a feed item's closing as its card says it: who decided, and from which Matrix
// account when it was one.
func closingOf(c threadfeed.Closing) Closing {
	out := Closing{By: c.By, At: c.At, Note: c.Note}
	if c.Via != nil {
		out.By += " (" + c.Via.ChatUserID + " on " + c.Via.Surface + ")"
	}
	out.How = How(surfaces.Outcome(c))
	if c.How == threadfeed.ClosedDecided && c.Decision == threadfeed.ActionComment && out.Note != "" {
		out.Note = "changes requested: " + out.Note
	}
	return out
}
