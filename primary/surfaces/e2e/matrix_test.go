package e2e_test

import (
	"context"
	"strings"
	"testing"

	"maunium.net/go/mautrix/event"

	"github.com/turncli/turncli/primary/store"
)

// TestACommandIsApprovedByAReactionInItsMatrixThread: the approval a background command
// waits for is posted in its conversation's Matrix thread; reactions from an account linked to
// nobody and from a member are refused there, each told why; an admin's ✅ approves it, the
// command runs, and the card is edited to say who decided.
func TestACommandIsApprovedByAReactionInItsMatrixThread(t *testing.T) {
	r := newRoom(t)
	env := startPrimary(t, r)
	key := runInBackground(t, env, r, "printf deployed")

	events := r.await(t, "card of "+key, func(events []*event.Event) bool { return cardOf(r, events, key) != nil })
	card := cardOf(r, events, key)
	if card.Type.Type != "io.mindroom.tool_approval" || !strings.Contains(string(card.Content.VeryRaw), `"status":"pending"`) {
		t.Fatalf("card %s %s; want a pending io.mindroom.tool_approval", card.Type.Type, card.Content.VeryRaw)
	}

	daves := r.react(t, r.dave, card.ID, "✅")
	events = r.await(t, "refusal of Dave", func(events []*event.Event) bool { return noticeTo(r, events, daves) != nil })
	if got, want := body(noticeTo(r, events, daves)), string(r.dave.UserID)+`: the matrix account "`+string(r.dave.UserID)+
		`" is not linked to anyone here; an admin must link it before it can decide or answer`; got != want {
		t.Errorf("refusal of an unlinked account:\n got %q\nwant %q", got, want)
	}
	carols := r.react(t, r.carol, card.ID, "✅")
	events = r.await(t, "refusal of Carol", func(events []*event.Event) bool { return noticeTo(r, events, carols) != nil })
	if got := body(noticeTo(r, events, carols)); !strings.HasPrefix(got, string(r.carol.UserID)+": ") || !strings.Contains(got, "admin") {
		t.Errorf("refusal of a member: %q; want it to say only admins approve", got)
	}
	ap, err := env.Primary.Internals().Store.Approval(context.Background(), mustID(t, key))
	if err != nil || ap.Status != store.ApprovalPending {
		t.Fatalf("after the refusals the approval is %v, %v; want pending", ap.Status, err)
	}

	r.react(t, r.bob, card.ID, "✅")
	var edits []*event.Event
	r.await(t, "the card's closing edit", func([]*event.Event) bool {
		edits = r.edits(t, card.ID)
		return len(edits) > 0
	})
	closed := newContent(t, edits[0])
	by := "bob (" + string(r.bob.UserID) + " on matrix)"
	if !strings.Contains(closed.FormattedBody, "Approved by "+by) || closed.Status != "approved" || closed.ResolvedBy != by {
		t.Errorf("closed card %+v; want it approved by %s", closed, by)
	}
	if len(edits) != 1 {
		t.Errorf("%d edits of the card; want 1:\n%s", len(edits), dump(edits))
	}
	job := awaitJob(t, env, mustID(t, key))
	if !strings.HasSuffix(job.Tail, "deployed") {
		t.Errorf("the approved command's output %q; want it to end with %q", job.Tail, "deployed")
	}
}
