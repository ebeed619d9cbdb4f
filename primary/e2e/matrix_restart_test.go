package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/durationpb"
	"maunium.net/go/mautrix/event"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/matrixtest"
	"github.com/turncli/turncli/internal/shellpriv/shellprivtest"
	"github.com/turncli/turncli/primary/operators"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/sqlite"
)

// matrixPatience bounds each wait on the homeserver; nothing waits for it unless the test
// fails.
const matrixPatience = 60 * time.Second

// editHold stands between a primary and its homeserver. While holding, it forwards the first
// card edit (an m.replace sent with PUT …/send/…) in full, so the homeserver stores the edit
// and remembers its transaction id, but never answers the primary: the edit is done and the
// primary does not know it, as when the primary dies before reading the answer.
type editHold struct {
	srv     *httptest.Server
	holding atomic.Bool
	// held receives the homeserver's status for the edit it withholds, once.
	held     chan int
	signaled atomic.Bool
	done     chan struct{} // closed when the test ends, so a withheld request lets go

	mu    sync.Mutex
	edits []string // the path of each edit sent, which ends with its transaction id
}

// sent is the path of each edit sent so far, oldest first.
func (h *editHold) sent() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.edits)
}

func newEditHold(t *testing.T, homeserver string) *editHold {
	t.Helper()
	target, err := url.Parse(homeserver)
	if err != nil {
		t.Fatal(err)
	}
	h := &editHold{held: make(chan int, 1), done: make(chan struct{})}
	proxy := httputil.NewSingleHostReverseProxy(target)
	// A killed primary's requests end unanswered; that is the test, not an error to log.
	proxy.ErrorHandler = func(w http.ResponseWriter, _ *http.Request, _ error) { w.WriteHeader(http.StatusBadGateway) }
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPut || !strings.Contains(r.URL.Path, "/send/") {
			proxy.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if !bytes.Contains(body, []byte(`"m.replace"`)) {
			proxy.ServeHTTP(w, r)
			return
		}
		h.mu.Lock()
		h.edits = append(h.edits, r.URL.Path)
		h.mu.Unlock()
		if !h.holding.Load() || !h.signaled.CompareAndSwap(false, true) {
			proxy.ServeHTTP(w, r)
			return
		}
		// The edit reaches the homeserver even if the primary dies meanwhile.
		answer := httptest.NewRecorder()
		proxy.ServeHTTP(answer, r.WithContext(context.WithoutCancel(r.Context())))
		h.held <- answer.Code
		select {
		case <-r.Context().Done(): // the primary is gone
		case <-h.done:
		}
	}))
	t.Cleanup(func() { close(h.done); h.srv.Close() })
	return h
}

// prepareMatrixState writes into state, before any primary runs on it, what the thread
// needs: Bob an admin linked to his Matrix account, and the thread in the auto mode, where a
// background command waits for an admin.
func prepareMatrixState(t *testing.T, state string, r *matrixtest.Room) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(state, sqlite.FileName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := operators.Add(ctx, db, "bob", store.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.LinkIdentity(ctx, store.NewIdentityLink{Surface: "matrix", ChatUserID: string(r.People["bob"].UserID), Person: "bob"}, "admin"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetConversationMode(ctx, string(r.ID), string(r.Root), store.ModeAuto, "test"); err != nil {
		t.Fatal(err)
	}
}

// startMatrixPrimary starts a real primary on state whose Matrix surface posts as the room's
// bot through the homeserver at homeserver.
func startMatrixPrimary(t *testing.T, name, bin, state, homeserver string, r *matrixtest.Room) *restartRig {
	t.Helper()
	args := []string{"--state-dir", state, "--grpc-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0",
		"--agent-cli-listen", "127.0.0.1:0", "--log-level", "info",
		"--matrix-homeserver", homeserver, "--matrix-user", string(r.Bot.UserID), "--matrix-device", string(r.Bot.DeviceID)}
	env := mpBaseEnv(t, "MINDROOM_MATRIX_ACCESS_TOKEN="+r.Bot.AccessToken)
	rig, _ := connectRig(t, mpStart(t, name, filepath.Join(bin, "mindroom-primary"), env, args...), state)
	return rig
}

// backgroundInThread asks, natively over the runtime API and for Bob whom the runtime vouches
// for, for a background command in the room's thread, and returns its approval's item key.
func (rig *restartRig) backgroundInThread(t *testing.T, r *matrixtest.Room, command string) string {
	t.Helper()
	ctx, cancel := bearerCtx(rig.runtime)
	defer cancel()
	resp, err := rig.api.OpenResponse(ctx, &responsev1.OpenResponseRequest{
		AgentName: "tester", RequesterId: string(r.People["bob"].UserID), Flags: []string{"requester_trusted"},
		Conversation: &conversationv1.Conversation{Channel: string(r.ID), Thread: string(r.Root)},
		Origin:       responsev1.Origin_ORIGIN_FOREGROUND,
		ShellMode:    responsev1.ShellMode_SHELL_MODE_MINIMAL,
	})
	if err != nil {
		t.Fatalf("OpenResponse: %v", err)
	}
	defer func() {
		_, _ = rig.api.CloseResponse(ctx, &responsev1.CloseResponseRequest{ResponseId: resp.GetResponseId()})
	}()
	res, err := rig.api.CallTool(ctx, &responsev1.CallToolRequest{
		ResponseId: resp.GetResponseId(), CallId: uuid.NewString(), Toolkit: "interaction", Function: "run_in_background",
		ArgumentsJson: `{"command":` + strconv.Quote(command) + `,"label":"deploy"}`, Wait: durationpb.New(mpDeadline),
	})
	if err != nil || res.GetReceipt().GetStatus() != responsev1.CallStatus_CALL_STATUS_COMPLETED {
		t.Fatalf("run_in_background %q: %v, %v", command, res, err)
	}
	m := regexp.MustCompile(`"approval_id":(\d+)`).FindStringSubmatch(res.GetReceipt().GetOutcomeJson())
	if m == nil {
		t.Fatalf("run_in_background %q names no approval: %s", command, res.GetReceipt().GetOutcomeJson())
	}
	return "approval/" + m[1]
}

// syncPosition is the room's /sync position now, read as the bot (whose position the primary
// saves).
func syncPosition(t *testing.T, r *matrixtest.Room) string {
	t.Helper()
	resp, err := r.Bot.SyncRequest(context.Background(), 0, "", "", false, event.PresenceOffline)
	if err != nil {
		t.Fatalf("sync as the bot: %v", err)
	}
	return resp.NextBatch
}

// rewindMatrixSync sets, while no primary runs on state, the Matrix surface's saved /sync
// position to position, so the next primary reads every answer given since.
func rewindMatrixSync(t *testing.T, state, position string) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(state, sqlite.FileName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// "sync" is the name under which the primary keeps the surface's /sync position.
	if err := db.SaveSurfaceDelivery(ctx, store.SurfaceDelivery{Positions: []store.SurfacePosition{
		{Surface: "matrix", Name: "sync", Value: position}}}); err != nil {
		t.Fatal(err)
	}
}

// awaitCard waits for the bot's card of the item key in the room's thread.
func awaitCard(t *testing.T, r *matrixtest.Room, key string) *event.Event {
	t.Helper()
	events := r.Await(t, "card of "+key, matrixPatience, func(events []*event.Event) bool { return r.CardOf(events, key) != nil })
	return r.CardOf(events, key)
}

// TestAMatrixCardIsClosedOnceWhenThePrimaryDiesBeforeItsEdit kills the real primary after its
// card's closing edit reached the homeserver but before the primary learnt so: the primary
// started on the same state sends the edit again with the same transaction id, which the
// homeserver answers with the edit it has, so the card is edited once; Bob's reaction, read
// again, is recognised as taken, and the approved command runs once.
func TestAMatrixCardIsClosedOnceWhenThePrimaryDiesBeforeItsEdit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binaries")
	}
	r := matrixtest.StartForTest(t).NewRoom(t, "bot", "bob")
	bob := r.People["bob"]
	hold := newEditHold(t, r.Server.URL())
	bin := mpBuild(t)
	state, work := shellTempDir(t), shellprivtest.BinaryDir(t)
	prepareMatrixState(t, state, r)
	runs := filepath.Join(work, "deploy.runs")

	first := startMatrixPrimary(t, "mindroom-primary (first)", bin, state, hold.srv.URL, r)
	key := first.backgroundInThread(t, r, "echo run >> "+runs)
	card := awaitCard(t, r, key)

	hold.holding.Store(true)
	beforeReaction := syncPosition(t, r)
	reaction := r.React(t, bob, card.ID, "✅")
	select {
	case code := <-hold.held:
		if code != http.StatusOK {
			t.Fatalf("the homeserver answered the withheld edit with %d", code)
		}
	case <-time.After(matrixPatience):
		t.Fatalf("no edit of %s reached the homeserver within %v", key, matrixPatience)
	}
	// The approved command runs beside the delivery: waiting for it keeps a kill before the
	// job starts (an approval failed by the restart) out of this test.
	deadline := time.Now().Add(mpDeadline)
	for lines(t, runs) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the approved command did not run within %v", mpDeadline)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code := first.proc.stop(t, syscall.SIGKILL); code != -1 {
		t.Fatalf("primary exit code %d after SIGKILL", code)
	}
	hold.holding.Store(false)
	// The crash window: the homeserver holds the edit the killed primary never learnt of.
	r.Await(t, "the withheld edit of "+key, matrixPatience, func([]*event.Event) bool {
		return len(r.Relations(t, card.ID, event.RelReplace)) > 0
	})
	// The first primary saved its /sync position past Bob's reaction once it had relayed it;
	// a primary killed before that save reads the reaction again. Rewinding the position
	// makes the second primary do so.
	rewindMatrixSync(t, state, beforeReaction)

	second := startMatrixPrimary(t, "mindroom-primary (second)", bin, state, hold.srv.URL, r)
	// Delivery is in the feed's order, one item at a time: once the next card is posted, the
	// first card's pending edit has been sent again.
	next := second.backgroundInThread(t, r, "echo next")
	nextCard := awaitCard(t, r, next)
	// The listener relays answers in the room's order: once Bob's approval of the next card
	// closes it, his first reaction, read again, has been relayed too.
	r.React(t, bob, nextCard.ID, "✅")
	r.Await(t, "closing edit of "+next, matrixPatience, func([]*event.Event) bool {
		return len(r.Relations(t, nextCard.ID, event.RelReplace)) > 0
	})

	// Two changes of the card: its closing, whose edit the first primary sent and the second
	// sent again with the same transaction id (the homeserver kept one), and the approved
	// command's start, which the second primary sent.
	edits := r.Relations(t, card.ID, event.RelReplace)
	if len(edits) != 2 {
		t.Fatalf("%d edits of the card; want 2, its closing once and its outcome:\n%s", len(edits), matrixtest.Dump(edits))
	}
	// Not by chance: the second primary did send the edit again, with its transaction id.
	if sent := hold.sent(); len(sent) < 2 || sent[1] != sent[0] {
		t.Fatalf("edits sent through the proxy %q; want the first one sent again", sent)
	}
	by := "bob (" + string(bob.UserID) + " on matrix)"
	for _, edit := range edits {
		closed := matrixtest.NewContent(t, edit)
		if closed.Status != "approved" || closed.Body != "Approved: deploy" || closed.ResolvedBy != by ||
			!strings.Contains(closed.FormattedBody, "<strong>Approved by "+by+" at ") {
			t.Errorf("closed card %+v; want it approved by %s", closed, by)
		}
	}
	if last := matrixtest.NewContent(t, edits[1]); !strings.Contains(last.FormattedBody, "started as job") {
		t.Errorf("the card's last edit %q; want it to say the job the approval started", last.FormattedBody)
	}
	if notice := r.NoticeTo(r.Thread(t), reaction); notice != nil {
		t.Errorf("the bot answered Bob's reaction: %s", notice.Content.VeryRaw)
	}
	if n := lines(t, runs); n != 1 {
		t.Errorf("the approved command ran %d times", n)
	}
}
