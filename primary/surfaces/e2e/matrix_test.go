package e2e_test

import (
	"context"
	"strings"
	"testing"

	"maunium.net/go/mautrix/event"

	"github.com/turncli/turncli/internal/matrixtest"
	"github.com/turncli/turncli/primary/store"
)

// TestACommandIsApprovedByAReactionInItsMatrixThread: the approval a background command
// waits for is posted in its conversation's Matrix thread; reactions from an account linked to
// nobody and from a member are refused there, each told why; an admin's ✅ approves it, the
// command runs, and the card is edited once to say who decided.
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
	if edits = r.Relations(t, card.ID, event.RelReplace); len(edits) != 1 {
		t.Errorf("%d edits of the card; want 1:\n%s", len(edits), matrixtest.Dump(edits))
	}
}
