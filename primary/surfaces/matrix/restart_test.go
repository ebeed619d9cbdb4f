package matrix_test

import (
	"context"
	"testing"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/turncli/turncli/primary/surfaces/matrix"
)

// TestAfterAHomeserverRestart shows what a deterministic transaction id does and does not
// hold: Dendrite keeps the ids it was sent in memory only, so after it restarts the same
// send is a second event. Closing is safe regardless: the second edit reads as the first.
// Posting is not, so a caller that may retry a post across a restart asks Posted first.
func TestAfterAHomeserverRestart(t *testing.T) {
	ctx := context.Background()
	c := newConversation(t)
	surface := matrix.New(c.bot)
	card := callCard(c)
	cardID, err := surface.Post(ctx, card)
	if err != nil {
		t.Fatal(err)
	}
	closing := matrix.Closing{How: matrix.HowExpired, At: decidedAt}
	first, err := surface.Close(ctx, card, cardID, closing)
	if err != nil {
		t.Fatal(err)
	}

	// Wait until the homeserver has indexed the first edit: one it had not yet indexed when
	// it stopped was seen to come back without its relation to the card.
	c.await(t, first)
	c.server.RestartForTest(t)

	t.Run("ClosingAgainReadsTheSame", func(t *testing.T) {
		second, err := surface.Close(ctx, card, cardID, closing)
		if err != nil {
			t.Fatal(err)
		}
		if second == first {
			t.Fatalf("the restarted homeserver still knew the transaction id of %s", first)
		}
		_, _, firstContent := c.read(t, first)
		_, _, secondContent := c.read(t, second)
		if firstContent != secondContent {
			t.Fatalf("the second close reads\n%s\nthe first\n%s", secondContent, firstContent)
		}
		edits := c.relations(t, cardID, event.RelReplace, first, second)
		if len(edits) != 2 {
			var ids []id.EventID
			for _, e := range edits {
				ids = append(ids, e.ID)
			}
			t.Fatalf("the card has the edits %v, want %s and %s", ids, first, second)
		}
	})

	t.Run("PostedFindsTheCardAtItsVersion", func(t *testing.T) {
		found, err := surface.Posted(ctx, card)
		if err != nil {
			t.Fatal(err)
		}
		if found != cardID {
			t.Fatalf("Posted = %q, want %s", found, cardID)
		}
		newer := card
		newer.Version++
		if found, err := surface.Posted(ctx, newer); err != nil || found != "" {
			t.Fatalf("Posted for a version never posted = %q, %v; want none", found, err)
		}
	})

	t.Run("PostingAgainIsASecondEvent", func(t *testing.T) {
		again, err := surface.Post(ctx, card)
		if err != nil {
			t.Fatal(err)
		}
		if again == cardID {
			t.Fatalf("the restarted homeserver still knew the transaction id of %s", cardID)
		}
	})
}
