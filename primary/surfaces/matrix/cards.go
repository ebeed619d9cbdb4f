package matrix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"
)

// knownCard is what an answer needs of the card it answers, read from the card's own event.
type knownCard struct {
	mark   cardMark
	thread id.EventID
}

// cardCacheSize bounds the events remembered as cards or not; an event's content never
// changes, so forgetting only costs a read.
const cardCacheSize = 4096

// cardCache remembers, per event id, the card it is or nil for an event that is no card.
type cardCache map[id.EventID]*knownCard

func (c *cardCache) put(evt id.EventID, card *knownCard) {
	if *c == nil || len(*c) >= cardCacheSize {
		*c = cardCache{}
	}
	(*c)[evt] = card
}

// card reads the event evt of room and returns the card it is, or nil when it is not one of
// the bot's cards: someone else's event, an edit, a redacted event or one the bot cannot see.
// The card's own content says its key, kind and actions, so answers are read the same after
// a restart without any state of the Listener's.
func (l *Listener) card(ctx context.Context, room id.RoomID, evt id.EventID) (*knownCard, error) {
	if card, ok := l.cards[evt]; ok {
		return card, nil
	}
	got, err := l.cli.GetEvent(ctx, room, evt)
	switch {
	case errors.Is(err, mautrix.MNotFound), errors.Is(err, mautrix.MForbidden):
		got = nil
	case err != nil:
		return nil, fmt.Errorf("matrix: read the event %s: %w", evt, err)
	}
	card := cardOf(got, l.bot)
	l.cards.put(evt, card)
	return card, nil
}

// cardOf is the card evt is, or nil.
func cardOf(evt *event.Event, bot id.UserID) *knownCard {
	if evt == nil || evt.Sender != bot || evt.Unsigned.RedactedBecause != nil {
		return nil
	}
	var content struct {
		Mark      *cardMark        `json:"io.turncli.card"` // cardKey
		RelatesTo *event.RelatesTo `json:"m.relates_to"`
	}
	if json.Unmarshal(evt.Content.VeryRaw, &content) != nil || content.Mark == nil || content.Mark.Key == "" {
		return nil
	}
	if content.RelatesTo.GetReplaceID() != "" {
		return nil // an edit carries the card's content too, but answers go to the original
	}
	return &knownCard{mark: *content.Mark, thread: content.RelatesTo.GetThreadParent()}
}
