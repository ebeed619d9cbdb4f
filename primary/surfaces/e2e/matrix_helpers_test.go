package e2e_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/durationpb"
	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"

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

// newRoom is a room on a real homeserver with the bot the primary posts as, Bob (an admin),
// Carol (a member) and Dave (linked to nobody); Bob wrote the thread's root.
func newRoom(t *testing.T) *matrixtest.Room {
	t.Helper()
	return matrixtest.StartForTest(t).NewRoom(t, "bot", "bob", "carol", "dave")
}

// surface is the primary's Matrix section posting as the room's bot.
func surface(r *matrixtest.Room) matrix.Settings {
	return matrix.Settings{Homeserver: r.Server.URL(), UserID: string(r.Bot.UserID), DeviceID: string(r.Bot.DeviceID),
		AccessToken: r.Bot.AccessToken}
}

// startPrimary starts a primary delivering to the room's thread, with Bob an admin and Carol
// a member, each linked to their Matrix account, and the thread in the auto mode (background
// commands wait for an admin).
func startPrimary(t *testing.T, r *matrixtest.Room, opts ...testenv.Option) *testenv.Env {
	t.Helper()
	env := testenv.Start(t, append([]testenv.Option{testenv.WithConfig(func(c *primary.Config) {
		c.Shells.EnvAllow = []string{"LANG"}
		c.Matrix = surface(r)
	})}, opts...)...)
	ctx := context.Background()
	db := env.Primary.Internals().Store
	for _, p := range []struct {
		cli  *mautrix.Client
		name string
		role store.OperatorRole
	}{{r.People["bob"], "bob", store.RoleAdmin}, {r.People["carol"], "carol", store.RoleMember}} {
		if _, err := operators.Add(ctx, db, p.name, p.role); err != nil && !errors.Is(err, store.ErrExists) {
			t.Fatal(err)
		}
		if _, _, err := db.LinkIdentity(ctx, store.NewIdentityLink{Surface: "matrix", ChatUserID: string(p.cli.UserID), Person: p.name}, "admin"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.SetConversationMode(ctx, string(r.ID), string(r.Root), store.ModeAuto, "test"); err != nil {
		t.Fatal(err)
	}
	awaitFirstSync(t, db)
	return env
}

// awaitFirstSync waits until the primary's Matrix listener has saved its first /sync
// position: a listener with no position starts from now, so what the people say before then
// is the room's past and is not read.
func awaitFirstSync(t *testing.T, db store.Store) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		_, err := db.SurfacePosition(context.Background(), matrix.SurfaceName, "sync")
		if err == nil {
			return
		}
		if !errors.Is(err, store.ErrNotFound) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the primary's Matrix listener did not sync within %v", patience)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// openIn opens a foreground response in the room's thread for Bob, whom the runtime vouches
// for.
func openIn(t *testing.T, env *testenv.Env, r *matrixtest.Room) string {
	t.Helper()
	return env.Open(t, func(o *responsev1.OpenResponseRequest) {
		o.RequesterId = string(r.People["bob"].UserID)
		o.Conversation = &conversationv1.Conversation{Channel: string(r.ID), Thread: string(r.Root)}
		o.Origin = responsev1.Origin_ORIGIN_FOREGROUND
		o.Flags = append(o.Flags, "requester_trusted")
	})
}

// callNative calls an interaction tool and waits for its receipt to complete.
func callNative(t *testing.T, env *testenv.Env, response, function, args string) *responsev1.Receipt {
	t.Helper()
	res, err := env.Runtime.CallTool(context.Background(), &responsev1.CallToolRequest{
		ResponseId: response, CallId: uuid.NewString(), Toolkit: "interaction", Function: function,
		ArgumentsJson: args, Wait: durationpb.New(patience),
	})
	if err != nil || res.GetReceipt().GetStatus() != responsev1.CallStatus_CALL_STATUS_COMPLETED {
		t.Fatalf("%s %s: %v, %v", function, args, res, err)
	}
	return res.GetReceipt()
}

// runInBackground asks for a background command in the thread and returns its approval's key.
func runInBackground(t *testing.T, env *testenv.Env, r *matrixtest.Room, command string) string {
	t.Helper()
	callNative(t, env, openIn(t, env, r), "run_in_background", `{"command":`+strconv.Quote(command)+`,"label":"deploy"}`)
	aps, err := env.Primary.Internals().Store.ListApprovals(context.Background(), store.ApprovalFilter{Channel: string(r.ID), Thread: string(r.Root), Limit: 1})
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

func body(t *testing.T, e *event.Event) string {
	t.Helper()
	var c matrixtest.Card
	matrixtest.Content(t, e, &c)
	return c.Body
}
