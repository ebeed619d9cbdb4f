package matrix

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"
)

// Surface posts and closes cards, reports and notices as the bot. It holds no state; its
// methods are safe for concurrent use as far as the client is.
type Surface struct {
	cli *mautrix.Client
}

// New returns a Surface that sends through cli, a client logged in as the bot on a fixed
// device (transaction ids are remembered per access token).
func New(cli *mautrix.Client) *Surface { return &Surface{cli: cli} }

// ErrNoThread is returned for a card or report without a room or thread root: everything this
// surface posts belongs to a conversation's thread.
var ErrNoThread = errors.New("matrix: a room and a thread root are required")

// Post sends the open card into its thread and returns the card's event id. Its transaction
// id is TxnID(card.Key, "card", card.Version): posting the same card again against the same
// homeserver run returns the first event instead of a second one.
func (s *Surface) Post(ctx context.Context, card Card) (id.EventID, error) {
	if card.Room == "" || card.Thread == "" {
		return "", ErrNoThread
	}
	typ, content := cardEvent(card, nil)
	content["m.relates_to"] = threadRelation(card.Thread)
	return s.send(ctx, card.Room, typ, content, TxnID(card.Key, "card", card.Version))
}

// Close edits the card posted as cardID into its closed form: no more actions, and a line
// saying how, by whom and when it ended (for a MindRoom approval card, its status,
// resolved_by, resolved_at and resolution_reason as well). The edit depends only on its
// arguments and goes out with the transaction id TxnID(card.Key, "close", card.Version), so
// closing again, after any crash or restart, reads the same.
func (s *Surface) Close(ctx context.Context, card Card, cardID id.EventID, c Closing) (id.EventID, error) {
	if card.Room == "" || card.Thread == "" {
		return "", ErrNoThread
	}
	typ, content := cardEvent(card, &c)
	return s.send(ctx, card.Room, typ, editOf(typ, content, cardID), TxnID(card.Key, "close", card.Version))
}

// Report is a job's or an agent's report, already cut into chunks that each fit one event.
type Report struct {
	Key     string // the item key, for the transaction ids
	Version int
	Room    id.RoomID
	Thread  id.EventID
	Chunks  []string
	// First is the index in the whole report of Chunks[0], when the report is posted a part
	// at a time.
	First int
}

// PostReport sends the report's chunks into its thread, one message each, in order: each
// send returns before the next starts, so the room orders them as given. Chunk i goes out
// with TxnID(r.Key, "report/<i>", r.Version), so re-posting after a failure sends only the
// chunks not yet posted. The chunks are plain text only: no formatted body to escape.
func (s *Surface) PostReport(ctx context.Context, r Report) ([]id.EventID, error) {
	if r.Room == "" || r.Thread == "" {
		return nil, ErrNoThread
	}
	ids := make([]id.EventID, 0, len(r.Chunks))
	for i, chunk := range r.Chunks {
		content := map[string]any{
			"msgtype":      event.MsgText,
			"body":         chunk,
			"m.mentions":   map[string]any{},
			"m.relates_to": threadRelation(r.Thread),
		}
		evt, err := s.send(ctx, r.Room, event.EventMessage, content, TxnID(r.Key, "report/"+strconv.Itoa(r.First+i), r.Version))
		if err != nil {
			return ids, fmt.Errorf("report chunk %d of %d: %w", i+1, len(r.Chunks), err)
		}
		ids = append(ids, evt)
	}
	return ids, nil
}

// Notice answers the event replyTo with a notice in the thread under thread (or as a plain
// reply when thread is empty), for example to refuse an answer. The caller chooses the words.
// The same notice to the same event is sent once.
func (s *Surface) Notice(ctx context.Context, room id.RoomID, thread, replyTo id.EventID, text string) (id.EventID, error) {
	content := map[string]any{
		"msgtype":      event.MsgNotice,
		"body":         text,
		"m.mentions":   map[string]any{},
		"m.relates_to": replyRelation(thread, replyTo),
	}
	return s.send(ctx, room, event.EventMessage, content, TxnID(string(replyTo), "notice:"+text, 0))
}

func (s *Surface) send(ctx context.Context, room id.RoomID, typ event.Type, content map[string]any, txn string) (id.EventID, error) {
	resp, err := s.cli.SendMessageEvent(ctx, room, typ, content, mautrix.ReqSendEvent{TransactionID: txn})
	if err != nil {
		return "", fmt.Errorf("matrix: send %s: %w", typ.Type, err)
	}
	return resp.EventID, nil
}
