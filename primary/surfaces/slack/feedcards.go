package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"

	goslack "github.com/slack-go/slack"

	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/surfaces"
	"github.com/turncli/turncli/primary/threadfeed"
)

// SurfaceName is the Slack surface's name in identity links and its saved records.
const SurfaceName = "slack"

// Show implements surfaces.Surface: the item's card posted in its thread, rewritten as the
// item changes, closed when it closes. Slack has no idempotent post, so a card the surface
// has not recorded is first looked for in its thread by its delivery id: a post that went
// through before a crash is found, not repeated.
func (f *FeedSurface) Show(ctx context.Context, it threadfeed.Item, shown store.SurfaceCard) (string, error) {
	card := cardOfItem(it)
	ts := shown.MessageID
	if ts == "" {
		found, ok, err := f.c.FindCard(ctx, card.Channel, card.ThreadTS, card.DeliveryID)
		if err != nil {
			return "", err
		}
		if !ok {
			return f.c.Post(ctx, card)
		}
		ts = found
	}
	if it.Closing != nil {
		return ts, f.c.Close(ctx, card, ts, closingOf(*it.Closing))
	}
	return ts, f.c.Update(ctx, card, ts)
}

// Report implements surfaces.Surface: one chunk of a report as a reply in the card's thread.
func (f *FeedSurface) Report(ctx context.Context, card store.SurfaceCard, c threadfeed.Chunk) error {
	text := c.Text
	if c.Count > 1 {
		text = fmt.Sprintf("[%d/%d] %s", c.Index+1, c.Count, c.Text)
	}
	_, err := f.c.PostReport(ctx, card.Room, card.Thread, []ReportChunk{{DeliveryID: c.Key + "/report/" + strconv.Itoa(c.Index), Text: text}})
	return err
}

// Update rewrites the open card at ts as it now is (a new comment, a new plan snapshot),
// buttons included.
func (c *Client) Update(ctx context.Context, card Card, ts string) error {
	if err := card.validate(); err != nil {
		return err
	}
	r := render(card, nil)
	_, _, _, err := c.api.UpdateMessageContext(ctx, card.Channel, ts,
		goslack.MsgOptionText(r.fallback, false),
		goslack.MsgOptionBlocks(r.blocks...),
		goslack.MsgOptionMetadata(deliveryMetadata(cardEvent, card.ItemKey, card.DeliveryID)))
	if err != nil {
		return fmt.Errorf("update %s: %w", card.ItemKey, err)
	}
	return nil
}

// kindOfItem is the card kind of each kind of feed item.
var kindOfItem = map[threadfeed.Kind]Kind{
	threadfeed.KindCommandApproval: KindApproval,
	threadfeed.KindPlanApproval:    KindPlanApproval,
	threadfeed.KindPermission:      KindPermission,
	threadfeed.KindCallApproval:    KindCLICall,
	threadfeed.KindQuestionForm:    KindQuestion,
	threadfeed.KindPlanSnapshot:    KindPlan,
	threadfeed.KindJob:             KindReport,
	threadfeed.KindAgent:           KindReport,
}

// actionOfItem is the card action of each feed action a card offers: a form's submit is its
// Answer button; drafts and cancelling are not offered here.
var actionOfItem = map[threadfeed.Action]Action{
	threadfeed.ActionApprove:           ActionApprove,
	threadfeed.ActionDeny:              ActionDeny,
	threadfeed.ActionComment:           ActionComment,
	threadfeed.ActionAllowOnce:         ActionAllowOnce,
	threadfeed.ActionAllowThread:       ActionAllowThread,
	threadfeed.ActionAllowConversation: ActionAllowConversation,
	threadfeed.ActionSubmit:            ActionAnswer,
}

// cardOfItem is the card of a feed item as it stands. Its delivery id is the item's key: one
// card per item and thread.
func cardOfItem(it threadfeed.Item) Card {
	card := Card{ItemKey: it.Key, Kind: kindOfItem[it.Kind], Version: it.EventID, DeliveryID: it.Key,
		Channel: it.Channel, ThreadTS: it.Thread, Title: it.Title, Body: surfaces.Lines(it),
		Decidable: it.Preview, PreviewTruncated: it.PreviewTruncated}
	for _, a := range it.Actions {
		if action, ok := actionOfItem[a]; ok {
			card.Actions = append(card.Actions, action)
		}
	}
	if it.Kind == threadfeed.KindQuestionForm {
		card.Decidable, card.PreviewTruncated = "", false
		card.Form = formOf(it)
		if card.Form == nil || len(card.Form.Questions) == 0 {
			card.Actions = nil // nothing to answer with
		}
	}
	return card
}

// formOf is the question form of a question item; nil when its questions cannot be read.
func formOf(it threadfeed.Item) *Form {
	var qs []store.Question
	if json.Unmarshal([]byte(it.Text), &qs) != nil {
		return nil
	}
	form := &Form{Presentation: PresentationMessage, Revision: it.Revision}
	if it.Presentation == "modal" {
		form.Presentation = PresentationModal
	}
	for _, q := range qs {
		question := Question{ID: q.ID, Prompt: q.Prompt, Kind: QuestionKind(q.Type), Required: q.Required}
		for _, o := range q.Options {
			question.Options = append(question.Options, Option{Label: o.Label, Value: o.Value})
		}
		form.Questions = append(form.Questions, question)
	}
	return form
}

// closingOf is a feed item's closing as its card says it.
func closingOf(c threadfeed.Closing) Closing {
	out := Closing{ByName: c.By, At: c.At, Note: c.Note}
	if c.Via != nil && c.Via.Surface == SurfaceName {
		out.ByUserID = c.Via.ChatUserID
	} else if c.Via != nil {
		out.ByName += " (" + c.Via.ChatUserID + " on " + c.Via.Surface + ")"
	}
	out.How = Outcome(surfaces.Outcome(c))
	return out
}

// conversationIDs are Slack's ids of a conversation (a channel, a private channel, a direct
// message) and a thread's ts.
var (
	conversationID = regexp.MustCompile(`^[CDG][A-Z0-9]{2,}$`)
	threadTS       = regexp.MustCompile(`^[0-9]+\.[0-9]+$`)
)
