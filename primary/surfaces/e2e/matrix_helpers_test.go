package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/durationpb"
	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/matrixtest"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/operators"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/surfaces/matrix"
)

// patience bounds every wait of these tests; nothing waits for it unless a test fails.
const patience = 60 * time.Second

// room is a Matrix room on a real homeserver where a conversation's thread lives: the bot
// the primary posts as, Bob (an admin), Carol (a member) and Dave (linked to nobody), and the
// thread's root, which Bob wrote.
type room struct {
	server                *matrixtest.Server
	bot, bob, carol, dave *mautrix.Client
	id                    id.RoomID
	root                  id.EventID
}

func newRoom(t *testing.T) *room {
	t.Helper()
	ctx := context.Background()
	s := matrixtest.StartForTest(t)
	r := &room{server: s, bot: s.NewUser(t, "bot"), bob: s.NewUser(t, "bob"), carol: s.NewUser(t, "carol"), dave: s.NewUser(t, "dave")}
	created, err := r.bot.CreateRoom(ctx, &mautrix.ReqCreateRoom{Preset: "private_chat",
		Invite: []id.UserID{r.bob.UserID, r.carol.UserID, r.dave.UserID}})
	if err != nil {
		t.Fatal(err)
	}
	r.id = created.RoomID
	for _, cli := range []*mautrix.Client{r.bob, r.carol, r.dave} {
		if _, err := cli.JoinRoomByID(ctx, r.id); err != nil {
			t.Fatal(err)
		}
	}
	r.root = r.send(t, r.bob, event.EventMessage, map[string]any{"msgtype": "m.text", "body": "deploy the site"})
	return r
}

// surface is the primary's Matrix section posting as the room's bot.
func (r *room) surface() matrix.Settings {
	return matrix.Settings{Homeserver: r.server.URL(), UserID: string(r.bot.UserID), DeviceID: string(r.bot.DeviceID),
		AccessToken: r.bot.AccessToken}
}

// send sends content as cli.
func (r *room) send(t *testing.T, cli *mautrix.Client, typ event.Type, content any) id.EventID {
	t.Helper()
	resp, err := cli.SendMessageEvent(context.Background(), r.id, typ, content, mautrix.ReqSendEvent{TransactionID: uuid.NewString()})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	return resp.EventID
}

// react annotates target with key as cli.
func (r *room) react(t *testing.T, cli *mautrix.Client, target id.EventID, key string) id.EventID {
	t.Helper()
	return r.send(t, cli, event.EventReaction, map[string]any{
		"m.relates_to": map[string]any{"rel_type": "m.annotation", "event_id": target, "key": key},
	})
}

// say posts text in the thread as cli.
func (r *room) say(t *testing.T, cli *mautrix.Client, text string) id.EventID {
	t.Helper()
	return r.send(t, cli, event.EventMessage, map[string]any{"msgtype": "m.text", "body": text,
		"m.relates_to": map[string]any{"rel_type": "m.thread", "event_id": r.root, "is_falling_back": true,
			"m.in_reply_to": map[string]any{"event_id": r.root}}})
}

// thread is every event of the thread, oldest first, as Bob reads it.
func (r *room) thread(t *testing.T) []*event.Event {
	t.Helper()
	var out []*event.Event
	req := &mautrix.ReqGetRelations{RelationType: event.RelThread, Dir: mautrix.DirectionForward, Limit: 100}
	for {
		page, err := r.bob.GetRelations(context.Background(), r.id, r.root, req)
		if err != nil {
			t.Fatalf("read the thread: %v", err)
		}
		out = append(out, page.Chunk...)
		if page.NextBatch == "" || len(page.Chunk) == 0 {
			return out
		}
		req.From = page.NextBatch
	}
}

// await reads the thread until find finds what it looks for in it.
func (r *room) await(t *testing.T, what string, find func([]*event.Event) bool) []*event.Event {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		events := r.thread(t)
		if find(events) {
			return events
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s in the thread after %v; it holds:\n%s", what, patience, dump(events))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// edits are the m.replace edits of target, oldest first, as Bob reads them.
func (r *room) edits(t *testing.T, target id.EventID) []*event.Event {
	t.Helper()
	resp, err := r.bob.GetRelations(context.Background(), r.id, target, &mautrix.ReqGetRelations{RelationType: event.RelReplace, Dir: mautrix.DirectionForward})
	if err != nil {
		t.Fatalf("edits of %s: %v", target, err)
	}
	return resp.Chunk
}

// cardOf is the bot's card of the item key among events; nil when there is none.
func cardOf(r *room, events []*event.Event, key string) *event.Event {
	for _, e := range events {
		var c struct {
			Card struct {
				Key string `json:"key"`
			} `json:"io.turncli.card"`
			RelatesTo struct {
				RelType string `json:"rel_type"`
			} `json:"m.relates_to"`
		}
		if e.Sender == r.bot.UserID && json.Unmarshal(e.Content.VeryRaw, &c) == nil && c.Card.Key == key && c.RelatesTo.RelType == "m.thread" {
			return e
		}
	}
	return nil
}

// noticeTo is the bot's notice replying to the event reply, or nil.
func noticeTo(r *room, events []*event.Event, reply id.EventID) *event.Event {
	for _, e := range events {
		var c struct {
			MsgType   string `json:"msgtype"`
			RelatesTo struct {
				InReplyTo struct {
					EventID id.EventID `json:"event_id"`
				} `json:"m.in_reply_to"`
			} `json:"m.relates_to"`
		}
		if e.Sender == r.bot.UserID && json.Unmarshal(e.Content.VeryRaw, &c) == nil && c.MsgType == "m.notice" && c.RelatesTo.InReplyTo.EventID == reply {
			return e
		}
	}
	return nil
}

func body(e *event.Event) string {
	var c struct {
		Body       string `json:"body"`
		NewContent struct {
			Body string `json:"body"`
		} `json:"m.new_content"`
	}
	_ = json.Unmarshal(e.Content.VeryRaw, &c)
	if c.NewContent.Body != "" {
		return c.NewContent.Body
	}
	return c.Body
}

func dump(events []*event.Event) string {
	var b strings.Builder
	for _, e := range events {
		b.WriteString(string(e.Sender) + " " + e.Type.Type + " " + string(e.Content.VeryRaw) + "\n")
	}
	return b.String()
}

// startPrimary starts a primary delivering to the room's thread, with Bob an admin and Carol
// a member, each linked to their Matrix account, and the thread in the auto mode (background
// commands wait for an admin).
func startPrimary(t *testing.T, r *room, opts ...testenv.Option) *testenv.Env {
	t.Helper()
	env := testenv.Start(t, append([]testenv.Option{testenv.WithConfig(func(c *primary.Config) {
		c.Shells.EnvAllow = []string{"LANG"}
		c.Matrix = r.surface()
	})}, opts...)...)
	ctx := context.Background()
	db := env.Primary.Internals().Store
	for _, p := range []struct {
		cli  *mautrix.Client
		name string
		role store.OperatorRole
	}{{r.bob, "bob", store.RoleAdmin}, {r.carol, "carol", store.RoleMember}} {
		if _, err := operators.Add(ctx, db, p.name, p.role); err != nil && !errors.Is(err, store.ErrExists) {
			t.Fatal(err)
		}
		if _, _, err := db.LinkIdentity(ctx, store.NewIdentityLink{Surface: "matrix", ChatUserID: string(p.cli.UserID), Person: p.name}, "admin"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.SetConversationMode(ctx, string(r.id), string(r.root), store.ModeAuto, "test"); err != nil {
		t.Fatal(err)
	}
	return env
}

// runInBackground asks for a background command in the thread and returns the approval key.
func runInBackground(t *testing.T, env *testenv.Env, r *room, command string) string {
	t.Helper()
	resp := env.Open(t, func(o *responsev1.OpenResponseRequest) {
		o.RequesterId = string(r.bob.UserID)
		o.Conversation = &conversationv1.Conversation{Channel: string(r.id), Thread: string(r.root)}
		o.Origin = responsev1.Origin_ORIGIN_FOREGROUND
		o.Flags = append(o.Flags, "requester_trusted")
	})
	res, err := env.Runtime.CallTool(context.Background(), &responsev1.CallToolRequest{
		ResponseId: resp, CallId: uuid.NewString(), Toolkit: "interaction", Function: "run_in_background",
		ArgumentsJson: `{"command":` + strconv.Quote(command) + `,"label":"deploy"}`, Wait: durationpb.New(patience),
	})
	if err != nil || res.GetReceipt().GetStatus() != responsev1.CallStatus_CALL_STATUS_COMPLETED {
		t.Fatalf("run_in_background: %v, %v", res, err)
	}
	aps, err := env.Primary.Internals().Store.ListApprovals(context.Background(), store.ApprovalFilter{Channel: string(r.id), Thread: string(r.root), Limit: 1})
	if err != nil || len(aps) != 1 {
		t.Fatalf("approvals %v, %v", aps, err)
	}
	return "approval/" + strconv.FormatInt(aps[0].ID, 10)
}

// mustID is the record id of an item key.
func mustID(t *testing.T, key string) int64 {
	t.Helper()
	_, n, _ := strings.Cut(key, "/")
	id, err := strconv.ParseInt(n, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// awaitJob waits for the job the approval started to end, and returns it.
func awaitJob(t *testing.T, env *testenv.Env, approval int64) store.Job {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(patience)
	for {
		ap, err := env.Primary.Internals().Store.Approval(ctx, approval)
		if err != nil {
			t.Fatal(err)
		}
		if ap.JobID != 0 {
			j, err := env.Primary.Internals().Store.Job(ctx, ap.JobID)
			if err != nil {
				t.Fatal(err)
			}
			if j.Status != store.JobRunning {
				return j
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("approval %d's job did not end in %v: %+v", approval, patience, ap)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// cardContent is what the tests read of a card's content.
type cardContent struct {
	Body          string `json:"body"`
	FormattedBody string `json:"formatted_body"`
	Status        string `json:"status"`
	ResolvedBy    string `json:"resolved_by"`
}

// newContent is the content an edit gives its card.
func newContent(t *testing.T, edit *event.Event) cardContent {
	t.Helper()
	var c struct {
		NewContent cardContent `json:"m.new_content"`
	}
	if err := json.Unmarshal(edit.Content.VeryRaw, &c); err != nil {
		t.Fatal(err)
	}
	return c.NewContent
}
