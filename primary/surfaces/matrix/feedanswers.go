package matrix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/surfaces"
	"github.com/turncli/turncli/primary/threadfeed"
)

// Relay is what people's answers in Matrix are relayed through: the thread feed's relays,
// and its setting of shell modes for "!mode".
type Relay interface {
	surfaces.Relay
	SetShellMode(ctx context.Context, id threadfeed.Identity, channel, thread, agent string, mode store.ShellMode) (store.ShellModeSetting, error)
}

var _ Receiver = (*FeedSurface)(nil)

// FeedSurface is the Matrix surface of the thread feed: it shows items as cards in their
// Matrix threads (package surfaces delivers them through Show and Report) and relays the
// answers its Listener reads (it is the Listener's Receiver) as the Matrix account that gave
// them. A refused answer is told in the thread, to its sender.
type FeedSurface struct {
	s      *Surface
	relay  Relay
	view   threadfeed.View
	logger *slog.Logger
}

// NewFeedSurface returns the feed surface showing cards through s in view's sizes and
// relaying answers through relay.
func NewFeedSurface(s *Surface, relay Relay, view threadfeed.View, logger *slog.Logger) *FeedSurface {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &FeedSurface{s: s, relay: relay, view: view, logger: logger}
}

// Name implements surfaces.Surface.
func (f *FeedSurface) Name() string { return SurfaceName }

// Serves implements surfaces.Surface: a conversation whose channel is a Matrix room id and
// whose thread is an event id, the thread's root, as a Matrix runtime names them.
func (f *FeedSurface) Serves(channel, thread string) bool {
	return strings.HasPrefix(channel, "!") && strings.Contains(channel, ":") && strings.HasPrefix(thread, "$")
}

// View implements surfaces.Surface.
func (f *FeedSurface) View() threadfeed.View { return f.view }

// actionOfDecision is the feed action of each card decision but a form's answer.
var actionOfDecision = map[Decision]threadfeed.Action{
	DecisionApprove:           threadfeed.ActionApprove,
	DecisionDeny:              threadfeed.ActionDeny,
	DecisionComment:           threadfeed.ActionComment,
	DecisionAllowOnce:         threadfeed.ActionAllowOnce,
	DecisionAllowThread:       threadfeed.ActionAllowThread,
	DecisionAllowConversation: threadfeed.ActionAllowConversation,
}

// Answer implements Receiver: the answer is relayed as its sender's Matrix account. A
// refusal is told to the sender in the thread, and the answer is done with; only a primary
// that cannot decide now fails, so the Listener reads the answer again.
func (f *FeedSurface) Answer(ctx context.Context, a Answer) error {
	account := threadfeed.Identity{Surface: SurfaceName, ChatUserID: string(a.Sender)}
	var err error
	if a.Decision == DecisionAnswer {
		err = f.answerForm(ctx, account, a)
	} else if action, ok := actionOfDecision[a.Decision]; ok {
		_, err = f.relay.Decide(ctx, account, a.Key, action, a.Text, threadfeed.Seen{CardBytes: f.view.CardBytes})
		if fault.Is(err, fault.Conflict) && f.decidedAlready(ctx, account, a.Key, action) {
			return nil // the same answer read again after a restart: it was taken the first time
		}
	} else {
		err = fault.Newf(fault.InvalidArgument, "%q is not a decision this surface knows", a.Decision)
	}
	return f.refuse(ctx, a, err)
}

// decidedAlready reports whether the item key was closed by the account with the decision:
// an answer the Listener reads again, since it reads each at least once.
func (f *FeedSurface) decidedAlready(ctx context.Context, account threadfeed.Identity, key string, decision threadfeed.Action) bool {
	it, err := f.relay.Item(ctx, key, f.view.CardBytes)
	c := it.Closing
	return err == nil && c != nil && c.Decision == decision && c.Via != nil &&
		*c.Via == store.Via{Surface: account.Surface, ChatUserID: account.ChatUserID}
}

// refuse tells the sender of a an answer's refusal in the thread. A failure of the primary
// itself is returned instead: retrying may cure it.
func (f *FeedSurface) refuse(ctx context.Context, a Answer, err error) error {
	if err == nil {
		return nil
	}
	kind, public := fault.KindOf(err)
	switch {
	case !public || kind == fault.Unavailable || kind == fault.Internal:
		f.logger.Error("relaying a Matrix answer failed", "key", a.Key, "sender", a.Sender, "err", err)
		return fmt.Errorf("relay %s's answer to %s: %w", a.Sender, a.Key, err)
	case errors.Is(ctx.Err(), context.Canceled):
		return ctx.Err()
	}
	_, nerr := f.s.Notice(ctx, a.Room, a.Thread, a.EventID, string(a.Sender)+": "+err.Error())
	return nerr
}

// answerForm submits a reply to a form of one question as its answer: the reply's text, or
// the options it names for a choice. A form of several questions is answered on the
// dashboard or through the runtime.
func (f *FeedSurface) answerForm(ctx context.Context, account threadfeed.Identity, a Answer) error {
	it, err := f.relay.Item(ctx, a.Key, f.view.CardBytes)
	if err != nil {
		return err
	}
	var questions []store.Question
	if err := json.Unmarshal([]byte(it.Text), &questions); err != nil {
		return fmt.Errorf("read the questions of %s: %w", a.Key, err)
	}
	if len(questions) != 1 {
		return fault.Newf(fault.FailedPrecondition, "%s has %d questions; a reply answers a form of one question, so answer this one on the dashboard", a.Key, len(questions))
	}
	answer, err := replyAnswer(questions[0], strings.TrimSpace(a.Text))
	if err != nil {
		return err
	}
	answers, err := json.Marshal(store.QuestionAnswers{questions[0].ID: answer})
	if err != nil {
		return err
	}
	_, err = f.relay.SubmitForm(ctx, account, a.Key, it.Revision, answers)
	return err
}

// replyAnswer reads a reply as the answer to q: its text for a text question; for a choice,
// the options whose value or label it names (comma-separated for several), or its text as a
// custom answer where q allows one.
func replyAnswer(q store.Question, text string) (store.QuestionAnswer, error) {
	a := store.QuestionAnswer{Values: []string{}}
	if q.Type == store.QuestionText {
		a.Custom = text
		return a, nil
	}
	parts := []string{text}
	if q.Type == store.QuestionMulti {
		parts = strings.Split(text, ",")
	}
	for _, part := range parts {
		part = strings.TrimSpace(part)
		i := slices.IndexFunc(q.Options, func(o store.QuestionOption) bool {
			return strings.EqualFold(o.Value, part) || strings.EqualFold(o.Label, part)
		})
		if i < 0 {
			if q.AllowCustom {
				return store.QuestionAnswer{Values: []string{}, Custom: text}, nil
			}
			labels := make([]string, len(q.Options))
			for j, o := range q.Options {
				labels[j] = o.Label
			}
			return store.QuestionAnswer{}, fault.Newf(fault.InvalidArgument, "%q is not one of the options: %s", part, strings.Join(labels, ", "))
		}
		if !slices.Contains(a.Values, q.Options[i].Value) {
			a.Values = append(a.Values, q.Options[i].Value)
		}
	}
	return a, nil
}

// ModeCommand implements Receiver: "!mode <agent> minimal|standard" sets the agent's shell
// mode in the thread it was sent in (its room's main timeline outside a thread), as the
// sender's Matrix account, and says in the thread what became of it.
func (f *FeedSurface) ModeCommand(ctx context.Context, m ModeCommand) error {
	var text string
	if m.Malformed {
		text = string(m.Sender) + ": usage: !mode <agent> minimal|standard"
	} else {
		account := threadfeed.Identity{Surface: SurfaceName, ChatUserID: string(m.Sender)}
		setting, err := f.relay.SetShellMode(ctx, account, string(m.Room), string(m.Thread), m.Agent, store.ShellMode(m.Mode))
		if err != nil {
			kind, public := fault.KindOf(err)
			if !public || kind == fault.Unavailable || kind == fault.Internal {
				f.logger.Error("setting a shell mode from Matrix failed", "sender", m.Sender, "agent", m.Agent, "err", err)
				return fmt.Errorf("set %s's shell mode for %s: %w", m.Agent, m.Sender, err)
			}
			text = string(m.Sender) + ": " + err.Error()
		} else {
			text = fmt.Sprintf("%s: the shell mode of %s here is now %s. Responses already open keep theirs.", m.Sender, m.Agent, setting.Mode)
		}
	}
	_, err := f.s.Notice(ctx, m.Room, m.Thread, m.EventID, text)
	return err
}
