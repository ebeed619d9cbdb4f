package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix/event"

	"github.com/turncli/turncli/internal/matrixtest"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/operators"
	"github.com/turncli/turncli/primary/store"
)

// TestACommandIsApprovedByAReactionInItsMatrixThread: the approval a background command
// waits for is posted in its conversation's Matrix thread; reactions from an account linked to
// nobody and from a member are refused there, each told why; an admin's ✅ approves it, the
// command runs, and the card is edited to say who decided, then which job it started.
func TestACommandIsApprovedByAReactionInItsMatrixThread(t *testing.T) {
	r := newRoom(t)
	env := startPrimary(t, r)
	key := runInBackground(t, env, r, "printf deployed")
	bob, carol, dave := r.People["bob"], r.People["carol"], r.People["dave"]

	events := r.Await(t, "card of "+key, patience, func(events []*event.Event) bool { return r.CardOf(events, key) != nil })
	card := r.CardOf(events, key)
	var open matrixtest.Card
	matrixtest.Content(t, card, &open)
	if card.Type.Type != "io.mindroom.tool_approval" || open.Status != "pending" || !strings.Contains(open.FormattedBody, "printf deployed") {
		t.Fatalf("card %s %s; want a pending io.mindroom.tool_approval showing the command", card.Type.Type, card.Content.VeryRaw)
	}
	// MindRoom's clients render a card only with both times; an approval that never expires
	// says it expires a year after it was asked for.
	requested, rerr := time.Parse(time.RFC3339, open.RequestedAt)
	expires, eerr := time.Parse(time.RFC3339, open.ExpiresAt)
	if rerr != nil || eerr != nil || expires.Sub(requested) != 365*24*time.Hour || time.Since(requested) > patience {
		t.Errorf("card requested_at %q, expires_at %q; want the request's time and a year later", open.RequestedAt, open.ExpiresAt)
	}

	daves := r.React(t, dave, card.ID, "✅")
	events = r.Await(t, "refusal of Dave", patience, func(events []*event.Event) bool { return r.NoticeTo(events, daves) != nil })
	if got, want := body(t, r.NoticeTo(events, daves)), string(dave.UserID)+`: the matrix account "`+string(dave.UserID)+
		`" is not linked to anyone here; an admin must link it before it can decide or answer`; got != want {
		t.Errorf("refusal of an unlinked account:\n got %q\nwant %q", got, want)
	}
	carols := r.React(t, carol, card.ID, "✅")
	events = r.Await(t, "refusal of Carol", patience, func(events []*event.Event) bool { return r.NoticeTo(events, carols) != nil })
	if got := body(t, r.NoticeTo(events, carols)); !strings.HasPrefix(got, string(carol.UserID)+": ") || !strings.Contains(got, "admin") {
		t.Errorf("refusal of a member: %q; want it to say only admins approve", got)
	}
	ap, err := env.Primary.Internals().Store.Approval(context.Background(), mustID(t, key))
	if err != nil || ap.Status != store.ApprovalPending {
		t.Fatalf("after the refusals the approval is %v, %v; want pending", ap.Status, err)
	}

	r.React(t, bob, card.ID, "✅")
	var edits []*event.Event
	r.Await(t, "the card's closing edit", patience, func([]*event.Event) bool {
		edits = r.Relations(t, card.ID, event.RelReplace)
		return len(edits) > 0
	})
	closed := matrixtest.NewContent(t, edits[0])
	by := "bob (" + string(bob.UserID) + " on matrix)"
	if !strings.Contains(closed.FormattedBody, "Approved by "+by) || closed.Status != "approved" || closed.ResolvedBy != by {
		t.Errorf("closed card %+v; want it approved by %s", closed, by)
	}
	late := r.React(t, carol, card.ID, "❌")
	events = r.Await(t, "answer to a late denial", patience, func(events []*event.Event) bool { return r.NoticeTo(events, late) != nil })
	if got, want := body(t, r.NoticeTo(events, late)), string(carol.UserID)+`: `+key+` was already decided (approve) by bob from the matrix account "`+
		string(bob.UserID)+`"; nothing changed`; got != want {
		t.Errorf("answer to a late denial:\n got %q\nwant %q", got, want)
	}
	job := awaitJob(t, env, mustID(t, key))
	if !strings.HasSuffix(job.Tail, "deployed") {
		t.Errorf("the approved command's output %q; want it to end with %q", job.Tail, "deployed")
	}
	// The approved command's start is the card's second and last change.
	r.Await(t, "the card's edit naming the job", patience, func([]*event.Event) bool {
		edits = r.Relations(t, card.ID, event.RelReplace)
		return strings.Contains(matrixtest.NewContent(t, edits[len(edits)-1]).FormattedBody, "Note: started as job "+strconv.FormatInt(job.ID, 10))
	})
	if len(edits) != 2 {
		t.Errorf("%d edits of the card; want 2, its closing and its outcome:\n%s", len(edits), matrixtest.Dump(edits))
	}
}

// TestALongReportArrivesInOrderUnderItsCard: a background agent's report longer than the
// surface's message size is posted under its card in numbered pieces, in order, which joined
// hold the report.
func TestALongReportArrivesInOrderUnderItsCard(t *testing.T) {
	r := newRoom(t)
	env := startPrimary(t, r, testenv.WithConfig(func(c *primary.Config) {
		c.Matrix.ChunkBytes = 1024
		c.Interaction.AgentEngine = "test" // says each "say" line of its task
	}))
	var task strings.Builder
	for i := 1; i <= 400; i++ {
		fmt.Fprintf(&task, "say line %03d\n", i)
	}
	args, err := json.Marshal(map[string]string{"task": task.String(), "label": "reporter"})
	if err != nil {
		t.Fatal(err)
	}
	callNative(t, env, openIn(t, env, r), "run_agent_in_background", string(args))
	jobs, err := env.Primary.Internals().Store.ListJobs(context.Background(), "")
	if err != nil || len(jobs) != 1 {
		t.Fatalf("jobs %v, %v; want the agent's", jobs, err)
	}
	jobKey := "job/" + strconv.FormatInt(jobs[0].ID, 10)

	var pieces []string
	r.Await(t, "the whole report", patience, func(events []*event.Event) bool {
		pieces = pieces[:0]
		for _, e := range events {
			if text := body(t, e); e.Sender == r.Bot.UserID && strings.HasPrefix(text, "[") {
				pieces = append(pieces, text)
			}
		}
		return len(pieces) > 0 && strings.HasPrefix(pieces[len(pieces)-1], fmt.Sprintf("[%d/%d] ", len(pieces), len(pieces)))
	})
	if len(pieces) < 3 {
		t.Fatalf("the report came in %d pieces; want it cut in several of 1024 bytes", len(pieces))
	}
	var joined strings.Builder
	for i, p := range pieces {
		prefix := fmt.Sprintf("[%d/%d] ", i+1, len(pieces))
		if !strings.HasPrefix(p, prefix) {
			t.Fatalf("piece %d starts %q; want %q", i, p[:min(len(p), 12)], prefix)
		}
		joined.WriteString(strings.TrimPrefix(p, prefix))
	}
	if !strings.Contains(joined.String(), "line 001\nline 002\n") || !strings.Contains(joined.String(), "line 399\nline 400") {
		t.Errorf("the report joined does not hold the output in order:\n%s", joined.String())
	}
	card := r.CardOf(r.Thread(t), jobKey)
	if card == nil {
		t.Fatalf("no card of %s in the thread", jobKey)
	}
	if got := body(t, card); !strings.HasPrefix(got, "Background agent: reporter") {
		t.Errorf("the agent's card says %q; want it headed Background agent: reporter", got)
	}
}

// TestModeIsSetFromTheThread: "!mode <agent> standard" from an admin sets the agent's shell
// mode in the thread and says so there; the same from a member is refused there; a malformed
// one is answered with its usage.
func TestModeIsSetFromTheThread(t *testing.T) {
	r := newRoom(t)
	env := startPrimary(t, r)
	bob, carol := r.People["bob"], r.People["carol"]

	set := r.Say(t, bob, "!mode coder standard")
	events := r.Await(t, "answer to Bob's !mode", patience, func(events []*event.Event) bool { return r.NoticeTo(events, set) != nil })
	if got, want := body(t, r.NoticeTo(events, set)), string(bob.UserID)+": the shell mode of coder here is now standard. Responses already open keep theirs."; got != want {
		t.Errorf("answer to an admin's !mode:\n got %q\nwant %q", got, want)
	}
	setting, err := env.Primary.Internals().Store.ShellMode(context.Background(), string(r.ID), string(r.Root), "coder")
	if err != nil || setting.UpdatedBy != "bob" || setting.Mode != store.ShellModeStandard {
		t.Errorf("stored mode %+v, %v; want standard set by bob", setting, err)
	}
	refused := r.Say(t, carol, "!mode coder minimal")
	events = r.Await(t, "answer to Carol's !mode", patience, func(events []*event.Event) bool { return r.NoticeTo(events, refused) != nil })
	if got, want := body(t, r.NoticeTo(events, refused)), string(carol.UserID)+": only admins set shell modes; carol is a member"; got != want {
		t.Errorf("answer to a member's !mode:\n got %q\nwant %q", got, want)
	}
	bad := r.Say(t, bob, "!mode coder fast")
	events = r.Await(t, "answer to a malformed !mode", patience, func(events []*event.Event) bool { return r.NoticeTo(events, bad) != nil })
	if got, want := body(t, r.NoticeTo(events, bad)), string(bob.UserID)+": usage: !mode <agent> minimal|standard"; got != want {
		t.Errorf("answer to a malformed !mode:\n got %q\nwant %q", got, want)
	}
}

// TestADenialOnTheOperatorAPIClosesTheMatrixCard: a decision taken off the chat (the
// operator API the dashboard calls) closes the card in the thread too, saying who decided and
// why.
func TestADenialOnTheOperatorAPIClosesTheMatrixCard(t *testing.T) {
	r := newRoom(t)
	env := startPrimary(t, r)
	olive, err := operators.Add(context.Background(), env.Primary.Internals().Store, "olive", store.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	key := runInBackground(t, env, r, "printf never")
	events := r.Await(t, "card of "+key, patience, func(events []*event.Event) bool { return r.CardOf(events, key) != nil })
	card := r.CardOf(events, key)

	req, err := http.NewRequest(http.MethodPost, env.HTTPURL+"/v1/operator/approvals/"+strconv.FormatInt(mustID(t, key), 10)+":decide",
		strings.NewReader(`{"decision":"DECISION_DENY","text":"not <today>"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+olive)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("deny on the operator API: %s", resp.Status)
	}
	var edits []*event.Event
	r.Await(t, "the card's closing edit", patience, func([]*event.Event) bool {
		edits = r.Relations(t, card.ID, event.RelReplace)
		return len(edits) > 0
	})
	closed := matrixtest.NewContent(t, edits[0])
	if closed.Status != "denied" || closed.ResolvedBy != "olive" || !strings.Contains(closed.FormattedBody, "Denied by olive") ||
		!strings.Contains(closed.FormattedBody, "not &lt;today&gt;") {
		t.Errorf("closed card %+v; want it denied by olive, the reason escaped", closed)
	}
}

// TestADashboardWatchingHearsADecisionTakenInMatrix: a decision taken in the thread reaches
// the operators' live feed the dashboard and the CLI watch, so their cards close too.
func TestADashboardWatchingHearsADecisionTakenInMatrix(t *testing.T) {
	r := newRoom(t)
	env := startPrimary(t, r)
	olive, err := operators.Add(context.Background(), env.Primary.Internals().Store, "olive", store.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	key := runInBackground(t, env, r, "printf watched")
	events := r.Await(t, "card of "+key, patience, func(events []*event.Event) bool { return r.CardOf(events, key) != nil })

	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, env.HTTPURL+"/v1/operator/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+olive)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	if !lines.Scan() || lines.Text() != `{"result":{"event":null}}` {
		t.Fatalf("first line %q, %v; want the empty event", lines.Text(), lines.Err())
	}
	r.React(t, r.People["bob"], r.CardOf(events, key).ID, "✅")
	for lines.Scan() {
		var m struct {
			Result struct {
				Event struct{ Kind, Subject string } `json:"event"`
			} `json:"result"`
		}
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", lines.Text(), err)
		}
		if m.Result.Event.Kind == "approval.decided" && m.Result.Event.Subject == key {
			return
		}
	}
	t.Fatalf("no approval.decided of %s before the stream ended: %v", key, lines.Err())
}

// TestACardAlreadyInItsThreadIsNotPostedAgain: a card the bot posted before a crash whose
// transaction the homeserver no longer remembers (it restarted too) is found in its thread
// and used, not posted a second time.
func TestACardAlreadyInItsThreadIsNotPostedAgain(t *testing.T) {
	r := newRoom(t)
	// The card of the approval to come, as a primary that died after posting it left it,
	// sent with a transaction id nobody will send again.
	earlier := r.Send(t, r.Bot, event.EventMessage, map[string]any{
		"msgtype": "m.text", "body": "Background command waiting for an admin",
		"io.turncli.card": map[string]any{"key": "approval/1", "kind": "command_approval", "version": 0, "actions": []string{"approve", "deny", "comment"}},
		"m.relates_to":    map[string]any{"rel_type": "m.thread", "event_id": r.Root, "is_falling_back": true, "m.in_reply_to": map[string]any{"event_id": r.Root}},
	})
	env := startPrimary(t, r)
	key := runInBackground(t, env, r, "printf once")
	if key != "approval/1" {
		t.Fatalf("the approval is %s; want approval/1", key)
	}
	r.React(t, r.People["bob"], earlier, "✅")
	awaitJob(t, env, mustID(t, key))
	var edits []*event.Event
	r.Await(t, "the earlier card's closing edit", patience, func([]*event.Event) bool {
		edits = r.Relations(t, earlier, event.RelReplace)
		return len(edits) > 0
	})
	cards := 0
	for _, e := range r.Thread(t) {
		if e.Sender == r.Bot.UserID && r.CardOf([]*event.Event{e}, key) != nil {
			cards++
		}
	}
	if cards != 1 {
		t.Errorf("%d cards of %s in the thread; want the one posted before", cards, key)
	}
}
