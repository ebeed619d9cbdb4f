package matrix_test

import (
	"context"
	"fmt"
	"testing"

	"maunium.net/go/mautrix/id"

	"github.com/turncli/turncli/primary/surfaces/matrix"
)

// TestAListenerReadsEverythingSentWhileItWasDown: more answers than one /sync timeline holds
// (100) arrive while no listener runs; the next listener reads every one, in order, by
// reading the gap the limited timeline left.
func TestAListenerReadsEverythingSentWhileItWasDown(t *testing.T) {
	c := newConversation(t)
	card := planCard(c)
	cardID, err := matrix.New(c.bot).Post(context.Background(), card)
	if err != nil {
		t.Fatal(err)
	}
	cursor := &memCursor{}
	_, stop := listen(t, c.bot, cursor)
	stop()

	const answers = 130
	var sent []id.EventID
	for i := range answers {
		sent = append(sent, c.react(t, c.bob, fmt.Sprintf("bob-%d", i), cardID, "✅"))
	}
	rec, _ := listen(t, c.bot, cursor)
	for i, want := range sent {
		if got := nextAnswer(t, rec); got.EventID != want || got.Decision != matrix.DecisionApprove {
			t.Fatalf("answer %d = %s %s, want %s approve", i, got.EventID, got.Decision, want)
		}
	}
}
