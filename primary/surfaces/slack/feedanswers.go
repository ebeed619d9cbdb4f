package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"

	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/surfaces"
	"github.com/turncli/turncli/primary/threadfeed"
)

// FeedSurface is the Slack surface of the thread feed: it shows items as cards in their
// Slack threads (package surfaces delivers them through Show and Report) and decides the
// answers its Handler receives (Decide, OpenForm) as the Slack account that gave them.
type FeedSurface struct {
	c      *Client
	relay  surfaces.Relay
	view   threadfeed.View
	logger *slog.Logger
}

// NewFeedSurface returns the feed surface posting through c in view's sizes and relaying
// answers through relay.
func NewFeedSurface(c *Client, relay surfaces.Relay, view threadfeed.View, logger *slog.Logger) *FeedSurface {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &FeedSurface{c: c, relay: relay, view: view, logger: logger}
}

// Name implements surfaces.Surface.
func (f *FeedSurface) Name() string { return SurfaceName }

// Serves implements surfaces.Surface: a conversation whose channel is a Slack conversation id
// and whose thread is its root message's ts, as a Slack runtime names them.
func (f *FeedSurface) Serves(channel, thread string) bool {
	return conversationID.MatchString(channel) && threadTS.MatchString(thread)
}

// View implements surfaces.Surface.
func (f *FeedSurface) View() threadfeed.View { return f.view }

// decisionOf is the feed action of each card action but a form's answer.
var decisionOf = map[Action]threadfeed.Action{
	ActionApprove:           threadfeed.ActionApprove,
	ActionDeny:              threadfeed.ActionDeny,
	ActionComment:           threadfeed.ActionComment,
	ActionAllowOnce:         threadfeed.ActionAllowOnce,
	ActionAllowThread:       threadfeed.ActionAllowThread,
	ActionAllowConversation: threadfeed.ActionAllowConversation,
}

// Decide is the Handler's Decider: the answer is relayed as its sender's Slack account. A
// refusal's text is what the Handler shows the sender; a failure of the primary itself is
// told as such and logged.
func (f *FeedSurface) Decide(ctx context.Context, a Answer) (string, error) {
	account := threadfeed.Identity{Surface: SurfaceName, ChatUserID: a.UserID}
	var err error
	if a.Decision == ActionAnswer {
		err = f.submit(ctx, account, a)
	} else if action, ok := decisionOf[a.Decision]; ok {
		_, err = f.relay.Decide(ctx, account, a.ItemKey, action, a.Text, threadfeed.Seen{CardBytes: f.view.CardBytes})
	} else {
		err = fault.Newf(fault.InvalidArgument, "%q is not a decision this surface knows", a.Decision)
	}
	if err == nil {
		return "", nil
	}
	if kind, public := fault.KindOf(err); !public || kind == fault.Internal || kind == fault.Unavailable {
		f.logger.Error("relaying a Slack answer failed", "key", a.ItemKey, "user", a.UserID, "err", err)
		return "", fault.New(fault.Unavailable, "turncli could not take your answer now; try again in a moment")
	}
	return "", err
}

// submit submits a form's answers as the account.
func (f *FeedSurface) submit(ctx context.Context, account threadfeed.Identity, a Answer) error {
	it, err := f.relay.Item(ctx, a.ItemKey, f.view.CardBytes)
	if err != nil {
		return err
	}
	var questions []store.Question
	if err := json.Unmarshal([]byte(it.Text), &questions); err != nil {
		return fmt.Errorf("read the questions of %s: %w", a.ItemKey, err)
	}
	answers := store.QuestionAnswers{}
	for id, values := range a.Form {
		i := slices.IndexFunc(questions, func(q store.Question) bool { return q.ID == id })
		if i < 0 || len(values) == 0 {
			continue // the store refuses what names no question; an empty input is no answer
		}
		if questions[i].Type == store.QuestionText {
			answers[id] = store.QuestionAnswer{Values: []string{}, Custom: values[0]}
		} else {
			answers[id] = store.QuestionAnswer{Values: values}
		}
	}
	raw, err := json.Marshal(answers)
	if err != nil {
		return err
	}
	_, err = f.relay.SubmitForm(ctx, account, a.ItemKey, a.Revision, raw)
	return err
}

// OpenForm is the Handler's FormOpener: the form of the item as it now stands, refused when
// it was closed meanwhile.
func (f *FeedSurface) OpenForm(ctx context.Context, a Answer) (Card, error) {
	it, err := f.relay.Item(ctx, a.ItemKey, f.view.CardBytes)
	if err != nil {
		return Card{}, err
	}
	if it.State == threadfeed.StateClosed {
		return Card{}, fault.Newf(fault.Conflict, "%s is closed: %s", it.Key, it.Closing.How)
	}
	card := cardOfItem(it)
	card.Channel, card.ThreadTS = a.Channel, it.Thread
	return card, nil
}
