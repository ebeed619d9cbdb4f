package interaction_test

import (
	"context"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/events"
	"github.com/turncli/turncli/primary/store"
)

// promptPosted waits on the live feed (subscribed before the call was made) until the call
// has posted its prompt, and returns the prompt as the store holds it. The bound only keeps a
// broken test from hanging.
func promptPosted(t *testing.T, env *testenv.Env, feed <-chan events.Event, callID string) store.Prompt {
	t.Helper()
	bound := time.NewTimer(waitBound)
	defer bound.Stop()
	for {
		select {
		case ev, ok := <-feed:
			if !ok {
				t.Fatalf("the live feed ended before call %s posted a prompt", callID)
			}
			data, _ := ev.Data.(map[string]any)
			if ev.Kind != "prompt.created" || data["call_id"] != callID {
				continue
			}
			id, _ := data["id"].(int64)
			p, err := env.Primary.Internals().Interaction.Prompts.Prompt(context.Background(), id)
			if err != nil {
				t.Fatalf("prompt %d: %v", id, err)
			}
			return p
		case <-bound.C:
			t.Fatalf("call %s posted no prompt within %v", callID, waitBound)
		}
	}
}
