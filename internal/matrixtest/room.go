package matrixtest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"
)

// Room is a room on a Server where a conversation's thread lives: a bot that posts in it,
// people who answer, and the thread's root, which the first person wrote.
type Room struct {
	Server *Server
	Bot    *mautrix.Client
	// People are the room's members besides the bot, by localpart.
	People map[string]*mautrix.Client
	ID     id.RoomID
	Root   id.EventID

	first string // the person who wrote the root, whose client reads the room
}

// NewRoom registers the bot and the people (the first of whom writes the thread's root),
// makes the bot create the room and has everyone join it.
func (s *Server) NewRoom(t testing.TB, bot string, people ...string) *Room {
	t.Helper()
	ctx := context.Background()
	r := &Room{Server: s, Bot: s.NewUser(t, bot), People: map[string]*mautrix.Client{}, first: people[0]}
	var invite []id.UserID
	for _, p := range people {
		r.People[p] = s.NewUser(t, p)
		invite = append(invite, r.People[p].UserID)
	}
	created, err := r.Bot.CreateRoom(ctx, &mautrix.ReqCreateRoom{Preset: "private_chat", Invite: invite})
	if err != nil {
		t.Fatal(err)
	}
	r.ID = created.RoomID
	for _, p := range people {
		if _, err := r.People[p].JoinRoomByID(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
	}
	r.Root = r.Send(t, r.People[people[0]], event.EventMessage, map[string]any{"msgtype": "m.text", "body": "the thread's root"})
	return r
}

// Send sends content as cli and returns the event's id.
func (r *Room) Send(t testing.TB, cli *mautrix.Client, typ event.Type, content any) id.EventID {
	t.Helper()
	resp, err := cli.SendMessageEvent(context.Background(), r.ID, typ, content, mautrix.ReqSendEvent{TransactionID: uuid.NewString()})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	return resp.EventID
}

// React annotates target with key as cli.
func (r *Room) React(t testing.TB, cli *mautrix.Client, target id.EventID, key string) id.EventID {
	t.Helper()
	return r.Send(t, cli, event.EventReaction, map[string]any{
		"m.relates_to": map[string]any{"rel_type": "m.annotation", "event_id": target, "key": key},
	})
}

// Say posts text in the thread as cli.
func (r *Room) Say(t testing.TB, cli *mautrix.Client, text string) id.EventID {
	t.Helper()
	return r.Send(t, cli, event.EventMessage, map[string]any{"msgtype": "m.text", "body": text,
		"m.relates_to": map[string]any{"rel_type": "m.thread", "event_id": r.Root, "is_falling_back": true,
			"m.in_reply_to": map[string]any{"event_id": r.Root}}})
}

// reader is the client the room is read with: a person's, who sees what people see.
func (r *Room) reader() *mautrix.Client { return r.People[r.first] }

// Thread is every event of the thread, oldest first.
func (r *Room) Thread(t testing.TB) []*event.Event {
	t.Helper()
	return r.Relations(t, r.Root, event.RelThread)
}

// Relations are the events relating to target with rel, oldest first.
func (r *Room) Relations(t testing.TB, target id.EventID, rel event.RelationType) []*event.Event {
	t.Helper()
	var out []*event.Event
	req := &mautrix.ReqGetRelations{RelationType: rel, Dir: mautrix.DirectionForward, Limit: 100}
	for {
		page, err := r.reader().GetRelations(context.Background(), r.ID, target, req)
		if err != nil {
			t.Fatalf("relations %s of %s: %v", rel, target, err)
		}
		out = append(out, page.Chunk...)
		if page.NextBatch == "" || len(page.Chunk) == 0 {
			return out
		}
		req.From = page.NextBatch
	}
}

// Await reads the thread until find finds what it looks for in it, within patience.
func (r *Room) Await(t testing.TB, what string, patience time.Duration, find func([]*event.Event) bool) []*event.Event {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		events := r.Thread(t)
		if find(events) {
			return events
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s in the thread after %v; it holds:\n%s", what, patience, Dump(events))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Dump is events one per line, for a failure's message.
func Dump(events []*event.Event) string {
	var b strings.Builder
	for _, e := range events {
		b.WriteString(string(e.Sender) + " " + e.Type.Type + " " + string(e.Content.VeryRaw) + "\n")
	}
	return b.String()
}

// Content decodes an event's content into v.
func Content(t testing.TB, e *event.Event, v any) {
	t.Helper()
	if err := json.Unmarshal(e.Content.VeryRaw, v); err != nil {
		t.Fatalf("content of %s: %v", e.ID, err)
	}
}

// CardOf is the bot's card of the item key among events (a message in the thread carrying
// the item under "io.turncli.card"), or nil.
func (r *Room) CardOf(events []*event.Event, key string) *event.Event {
	for _, e := range events {
		var c struct {
			Card struct {
				Key string `json:"key"`
			} `json:"io.turncli.card"`
			RelatesTo struct {
				RelType string `json:"rel_type"`
			} `json:"m.relates_to"`
		}
		if e.Sender == r.Bot.UserID && json.Unmarshal(e.Content.VeryRaw, &c) == nil && c.Card.Key == key && c.RelatesTo.RelType == "m.thread" {
			return e
		}
	}
	return nil
}

// NoticeTo is the bot's notice replying to the event reply among events, or nil.
func (r *Room) NoticeTo(events []*event.Event, reply id.EventID) *event.Event {
	for _, e := range events {
		var c struct {
			MsgType   string `json:"msgtype"`
			RelatesTo struct {
				InReplyTo struct {
					EventID id.EventID `json:"event_id"`
				} `json:"m.in_reply_to"`
			} `json:"m.relates_to"`
		}
		if e.Sender == r.Bot.UserID && json.Unmarshal(e.Content.VeryRaw, &c) == nil && c.MsgType == "m.notice" && c.RelatesTo.InReplyTo.EventID == reply {
			return e
		}
	}
	return nil
}

// Card is what tests read of a card's content, or of an edit's new content.
type Card struct {
	Body          string `json:"body"`
	FormattedBody string `json:"formatted_body"`
	Status        string `json:"status"`
	ResolvedBy    string `json:"resolved_by"`
	RequestedAt   string `json:"requested_at"`
	ExpiresAt     string `json:"expires_at"`
}

// NewContent is the content an edit (m.replace) gives its event.
func NewContent(t testing.TB, edit *event.Event) Card {
	t.Helper()
	var c struct {
		NewContent Card `json:"m.new_content"`
	}
	Content(t, edit, &c)
	return c.NewContent
}
