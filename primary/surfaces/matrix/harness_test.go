package matrix_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/turncli/turncli/internal/matrixtest"
	"github.com/turncli/turncli/primary/surfaces/matrix"
)

// conversation is a room on a real homeserver with the bot and two people, Bob and Carol, and
// a thread root Bob wrote: where a conversation's cards go.
type conversation struct {
	server          *matrixtest.Server
	bot, bob, carol *mautrix.Client
	room            id.RoomID
	root            id.EventID

	// Bob's /sync position and the room events it has shown him: the homeserver indexes a
	// sent event for reading asynchronously, and shows it in /sync once it has.
	bobSince string
	bobSeen  map[id.EventID]bool
}

func newConversation(t *testing.T) *conversation {
	t.Helper()
	ctx := context.Background()
	s := matrixtest.StartForTest(t)
	c := &conversation{server: s, bot: s.NewUser(t, "bot"), bob: s.NewUser(t, "bob"), carol: s.NewUser(t, "carol")}
	created, err := c.bot.CreateRoom(ctx, &mautrix.ReqCreateRoom{
		Name: "deployments", Preset: "private_chat", Invite: []id.UserID{c.bob.UserID, c.carol.UserID},
	})
	if err != nil {
		t.Fatal(err)
	}
	c.room = created.RoomID
	for _, cli := range []*mautrix.Client{c.bob, c.carol} {
		if _, err := cli.JoinRoomByID(ctx, c.room); err != nil {
			t.Fatal(err)
		}
	}
	c.root = c.send(t, c.bob, event.EventMessage, "root", map[string]any{"msgtype": "m.text", "body": "deploy the site"})
	c.bobSeen = map[id.EventID]bool{}
	c.await(t, c.root)
	return c
}

// await returns once Bob's /sync has shown every event of evts: from then on Bob can read
// them and their relations. Each sync long-polls for what is still missing.
func (c *conversation) await(t *testing.T, evts ...id.EventID) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	filter := `{"room":{"timeline":{"limit":1000}}}`
	for slices.ContainsFunc(evts, func(evt id.EventID) bool { return !c.bobSeen[evt] }) {
		resp, err := c.bob.FullSyncRequest(ctx, mautrix.ReqSync{Timeout: 10000, Since: c.bobSince, FilterID: filter})
		if err != nil {
			t.Fatalf("sync as Bob: %v", err)
		}
		c.bobSince = resp.NextBatch
		for _, evt := range resp.Rooms.Join[c.room].Timeline.Events {
			c.bobSeen[evt.ID] = true
		}
	}
}

// send sends content as cli with the transaction id txn and returns the event id.
func (c *conversation) send(t *testing.T, cli *mautrix.Client, typ event.Type, txn string, content any) id.EventID {
	t.Helper()
	resp, err := cli.SendMessageEvent(context.Background(), c.room, typ, content, mautrix.ReqSendEvent{TransactionID: txn})
	if err != nil {
		t.Fatalf("send %s: %v", txn, err)
	}
	return resp.EventID
}

// react annotates target with key as cli.
func (c *conversation) react(t *testing.T, cli *mautrix.Client, txn string, target id.EventID, key string) id.EventID {
	t.Helper()
	return c.send(t, cli, event.EventReaction, txn, map[string]any{
		"m.relates_to": map[string]any{"rel_type": "m.annotation", "event_id": target, "key": key},
	})
}

// read is the event evt as Bob's client reads it: type, sender and content as canonical JSON.
func (c *conversation) read(t *testing.T, evt id.EventID) (string, id.UserID, string) {
	t.Helper()
	c.await(t, evt)
	got, err := c.bob.GetEvent(context.Background(), c.room, evt)
	if err != nil {
		t.Fatalf("read %s: %v", evt, err)
	}
	return got.Type.Type, got.Sender, canonical(t, got.Content.Raw)
}

// relations are the events relating to target with rel, as Bob reads them once he has seen
// the events sent (which includes every one expected).
func (c *conversation) relations(t *testing.T, target id.EventID, rel event.RelationType, sent ...id.EventID) []*event.Event {
	t.Helper()
	c.await(t, sent...)
	resp, err := c.bob.GetRelations(context.Background(), c.room, target, &mautrix.ReqGetRelations{RelationType: rel, Dir: mautrix.DirectionForward})
	if err != nil {
		t.Fatalf("relations %s of %s: %v", rel, target, err)
	}
	return resp.Chunk
}

// canonical is v as JSON with sorted keys.
func canonical(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		t.Fatal(err)
	}
	b, err = json.Marshal(generic)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// memCursor keeps the sync position in memory, shared by the Listeners of one test as a
// database row would be by one process after another.
type memCursor struct {
	mu    sync.Mutex
	token string
}

func (c *memCursor) LoadSyncToken(context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.token, nil
}

func (c *memCursor) SaveSyncToken(_ context.Context, token string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.token = token
	return nil
}

// recorder is a Receiver that hands what it receives to the test in order.
type recorder struct {
	answers chan matrix.Answer
	modes   chan matrix.ModeCommand
}

// recorderSize holds more than any test sends: a listener hands over everything of its first
// sync before it is ready, and the test reads only after.
const recorderSize = 1000

func newRecorder() *recorder {
	return &recorder{answers: make(chan matrix.Answer, recorderSize), modes: make(chan matrix.ModeCommand, recorderSize)}
}

func (r *recorder) Answer(_ context.Context, a matrix.Answer) error {
	r.answers <- a
	return nil
}

func (r *recorder) ModeCommand(_ context.Context, m matrix.ModeCommand) error {
	r.modes <- m
	return nil
}

// waitTimeout bounds a wait for something the homeserver delivers asynchronously; it is a
// backstop against a hang, never the thing checked.
const waitTimeout = time.Minute

// listen runs a Listener for the bot with cursor until the test ends, and returns once it is
// ready: every event sent from then on reaches the recorder.
func listen(t *testing.T, bot *mautrix.Client, cursor matrix.Cursor) (*recorder, context.CancelFunc) {
	t.Helper()
	rec := newRecorder()
	l, err := matrix.NewListener(bot, cursor, rec)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	stop := func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("listener: %v", err)
		}
	}
	var once sync.Once
	stopOnce := func() { once.Do(stop) }
	t.Cleanup(stopOnce)
	select {
	case <-l.Ready():
	case err := <-done:
		t.Fatalf("the listener stopped before it was ready: %v", err)
	case <-time.After(waitTimeout):
		t.Fatal("the listener was not ready")
	}
	return rec, stopOnce
}

// nextAnswer is the next answer the recorder got.
func nextAnswer(t *testing.T, rec *recorder) matrix.Answer {
	t.Helper()
	select {
	case a := <-rec.answers:
		return a
	case <-time.After(waitTimeout):
		t.Fatal("no answer came")
	}
	return matrix.Answer{}
}

// nextMode is the next mode command the recorder got.
func nextMode(t *testing.T, rec *recorder) matrix.ModeCommand {
	t.Helper()
	select {
	case m := <-rec.modes:
		return m
	case <-time.After(waitTimeout):
		t.Fatal("no mode command came")
	}
	return matrix.ModeCommand{}
}
