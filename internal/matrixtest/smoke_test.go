package matrixtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/turncli/turncli/internal/matrixtest"
)

// TestThreadedConversation walks through what turncli's Matrix surface relies on, against a
// real homeserver: a thread under a message, a ✅ annotation on it, a threaded reply by another
// user, an m.replace edit, each read back from /sync with its relation and the sender's
// transaction id; retried sends; and all of it still there after the homeserver restarts.
func TestThreadedConversation(t *testing.T) {
	ctx := context.Background()
	s := matrixtest.StartForTest(t)
	alice, bob := s.NewUser(t, "alice"), s.NewUser(t, "bob")

	created, err := alice.CreateRoom(ctx, &mautrix.ReqCreateRoom{
		Name: "approvals", Preset: "private_chat", Invite: []id.UserID{bob.UserID},
	})
	if err != nil {
		t.Fatal(err)
	}
	room := created.RoomID
	if _, err := bob.JoinRoomByID(ctx, room); err != nil {
		t.Fatal(err)
	}

	first := send(t, alice, room, event.EventMessage, "first",
		&event.MessageEventContent{MsgType: event.MsgText, Body: "Approval required: shell.exec"})
	aliceReply := send(t, alice, room, event.EventMessage, "alice-reply", &event.MessageEventContent{
		MsgType: event.MsgNotice, Body: "Waiting for a decision",
		RelatesTo: (&event.RelatesTo{}).SetThread(first, first),
	})
	reaction := send(t, bob, room, event.EventReaction, "bob-reaction", &event.ReactionEventContent{
		RelatesTo: event.RelatesTo{Type: event.RelAnnotation, EventID: first, Key: "✅"},
	})
	bobReply := send(t, bob, room, event.EventMessage, "bob-reply", &event.MessageEventContent{
		MsgType: event.MsgText, Body: "Looks fine",
		RelatesTo: (&event.RelatesTo{}).SetThread(first, aliceReply),
	})
	edited := &event.MessageEventContent{MsgType: event.MsgText, Body: "Approved: shell.exec"}
	edited.SetEdit(first)
	edit := send(t, alice, room, event.EventMessage, "alice-edit", edited)

	// Every event as /sync gives it to Alice, the relation and all, exactly as sent.
	want := []timelineEvent{
		{first, "m.room.message", alice.UserID, "first",
			`{"body":"Approval required: shell.exec","msgtype":"m.text"}`},
		{aliceReply, "m.room.message", alice.UserID, "alice-reply", fmt.Sprintf(
			`{"body":"Waiting for a decision","m.relates_to":{"event_id":%q,"is_falling_back":true,"m.in_reply_to":{"event_id":%q},"rel_type":"m.thread"},"msgtype":"m.notice"}`,
			first, first)},
		{reaction, "m.reaction", bob.UserID, "", fmt.Sprintf(
			`{"m.relates_to":{"event_id":%q,"key":"✅","rel_type":"m.annotation"}}`, first)},
		{bobReply, "m.room.message", bob.UserID, "", fmt.Sprintf(
			`{"body":"Looks fine","m.relates_to":{"event_id":%q,"is_falling_back":true,"m.in_reply_to":{"event_id":%q},"rel_type":"m.thread"},"msgtype":"m.text"}`,
			first, aliceReply)},
		{edit, "m.room.message", alice.UserID, "alice-edit", fmt.Sprintf(
			`{"body":"* Approved: shell.exec","m.mentions":{},"m.new_content":{"body":"Approved: shell.exec","msgtype":"m.text"},"m.relates_to":{"event_id":%q,"rel_type":"m.replace"},"msgtype":"m.text"}`,
			first)},
	}
	ids := []id.EventID{first, aliceReply, reaction, bobReply, edit}

	got, nextBatch := syncUntil(t, alice, "", room, ids)
	checkTimeline(t, "Alice's sync", got, want)

	t.Run("RelationsListTheThreadTheAnnotationAndTheEdit", func(t *testing.T) {
		// Dendrite has no /threads endpoint; a thread's replies are read as relations of its root.
		checkRelations(t, alice, room, first, event.RelThread, []id.EventID{aliceReply, bobReply})
		checkRelations(t, alice, room, first, event.RelAnnotation, []id.EventID{reaction})
		checkRelations(t, alice, room, first, event.RelReplace, []id.EventID{edit})
	})

	// The homeserver remembers the transaction ids sent with an access token while it runs: a
	// retried send is the same event.
	note := send(t, alice, room, event.EventMessage, "note", &event.MessageEventContent{MsgType: event.MsgText, Body: "note"})
	t.Run("ARetriedSendIsTheSameEvent", func(t *testing.T) {
		again := send(t, alice, room, event.EventMessage, "note", &event.MessageEventContent{MsgType: event.MsgText, Body: "note"})
		if again != note {
			t.Fatalf("the retried send made %s, want %s", again, note)
		}
	})
	want = append(want, timelineEvent{note, "m.room.message", alice.UserID, "note", `{"body":"note","msgtype":"m.text"}`})
	ids = append(ids, note)
	_, nextBatch = syncUntil(t, alice, nextBatch, room, []id.EventID{note})

	t.Run("ARestartedServerKeepsTheRoom", func(t *testing.T) {
		s.RestartForTest(t)
		// A first sync after the restart, with the same access token, finds the room as it was,
		// transaction ids and all.
		again, _ := syncUntil(t, alice, "", room, ids)
		checkTimeline(t, "Alice's sync after the restart", again, want)

		// The restarted server has forgotten the transaction ids it was sent: a retry makes a
		// second event, which the sender can recognise in its sync by the transaction id.
		retried := send(t, alice, room, event.EventMessage, "note", &event.MessageEventContent{MsgType: event.MsgText, Body: "note"})
		if retried == note {
			t.Fatalf("the send retried after the restart was deduplicated into %s", note)
		}
		// A sync from the cursor taken before the restart gives only what came after it.
		later := send(t, bob, room, event.EventReaction, "bob-reaction-2", &event.ReactionEventContent{
			RelatesTo: event.RelatesTo{Type: event.RelAnnotation, EventID: bobReply, Key: "👀"},
		})
		resumed, _ := syncUntil(t, alice, nextBatch, room, []id.EventID{retried, later})
		checkTimeline(t, "Alice's sync from before the restart", resumed, []timelineEvent{
			{retried, "m.room.message", alice.UserID, "note", `{"body":"note","msgtype":"m.text"}`},
			{later, "m.reaction", bob.UserID, "", fmt.Sprintf(
				`{"m.relates_to":{"event_id":%q,"key":"👀","rel_type":"m.annotation"}}`, bobReply)},
		})
	})
}

// timelineEvent is what the test checks of a timeline event: its id, type, sender, the
// transaction id /sync gives back to its sender, and its content as canonical JSON.
type timelineEvent struct {
	id      id.EventID
	typ     string
	sender  id.UserID
	txn     string
	content string
}

// send sends content as cli with the transaction id txn and returns the event's id.
func send(t *testing.T, cli *mautrix.Client, room id.RoomID, typ event.Type, txn string, content any) id.EventID {
	t.Helper()
	resp, err := cli.SendMessageEvent(context.Background(), room, typ, content, mautrix.ReqSendEvent{TransactionID: txn})
	if err != nil {
		t.Fatalf("send %s: %v", txn, err)
	}
	return resp.EventID
}

// timelineFilter asks for whole timelines: the room's creation and the conversation fit.
const timelineFilter = `{"room":{"timeline":{"limit":100}}}`

// syncUntil syncs as cli from since until the room's timeline has shown every event in want,
// and returns the non-state events among those the room's timeline showed, in order. The
// homeserver hands events to /sync asynchronously, so one sync may come too early; each
// further one long-polls for the rest.
func syncUntil(t *testing.T, cli *mautrix.Client, since string, room id.RoomID, want []id.EventID) ([]*event.Event, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var seen []*event.Event
	for {
		resp, err := cli.FullSyncRequest(ctx, mautrix.ReqSync{Timeout: 10000, Since: since, FilterID: timelineFilter})
		if err != nil {
			t.Fatalf("sync as %s after %d events: %v", cli.UserID, len(seen), err)
		}
		since = resp.NextBatch
		if joined, ok := resp.Rooms.Join[room]; ok {
			for _, evt := range joined.Timeline.Events {
				if evt.StateKey == nil {
					seen = append(seen, evt)
				}
			}
		}
		if slices.ContainsFunc(want, func(w id.EventID) bool {
			return !slices.ContainsFunc(seen, func(evt *event.Event) bool { return evt.ID == w })
		}) {
			continue
		}
		return seen, since
	}
}

// checkTimeline fails the test unless got holds exactly the events of want, in order.
func checkTimeline(t *testing.T, what string, got []*event.Event, want []timelineEvent) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d events, want %d", what, len(got), len(want))
	}
	for i, evt := range got {
		content, err := json.Marshal(evt.Content.Raw) // map keys sorted: canonical
		if err != nil {
			t.Fatal(err)
		}
		g := timelineEvent{evt.ID, evt.Type.Type, evt.Sender, evt.Unsigned.TransactionID, string(content)}
		if g != want[i] {
			t.Errorf("%s: event %d:\n got %+v\nwant %+v", what, i, g, want[i])
		}
	}
}

// checkRelations fails the test unless the events relating to target with rel are exactly
// want, in any order.
func checkRelations(t *testing.T, cli *mautrix.Client, room id.RoomID, target id.EventID, rel event.RelationType, want []id.EventID) {
	t.Helper()
	resp, err := cli.GetRelations(context.Background(), room, target, &mautrix.ReqGetRelations{RelationType: rel})
	if err != nil {
		t.Fatalf("relations %s: %v", rel, err)
	}
	var got []id.EventID
	for _, evt := range resp.Chunk {
		got = append(got, evt.ID)
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("relations %s of %s = %v, want %v", rel, target, got, want)
	}
}
