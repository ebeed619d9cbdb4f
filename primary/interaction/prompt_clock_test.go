package interaction_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/turncli/turncli/internal/clock/clocktest"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/interaction"
	"github.com/turncli/turncli/primary/store"
)

// TestPromptBoundIsMeasuredByThePrimarysClock: a prompt's deadline and the bound its call
// waits are the primary's clock, so the full 280 seconds pass without waiting for them.
func TestPromptBoundIsMeasuredByThePrimarysClock(t *testing.T) {
	clk := clocktest.NewFake(time.Now())
	env := start(t, testenv.WithConfig(func(c *primary.Config) { c.Clock = clk }))
	ctx := context.Background()
	id := openAs(t, env, stranger, "$clocked")
	call := catalog.Call{ID: uuid.NewString(), Toolkit: interaction.Name, Function: "request_approval",
		Arguments: map[string]any{"details": "ship it"},
		Identity:  catalog.Identity{ResponseID: id, Agent: "tester", Requester: stranger, Channel: channel, Thread: "$clocked"}}

	idle := clk.Pending() // the primary's own tickers
	posted := clk.Now()
	type ended struct {
		r   catalog.Result
		err error
	}
	done := make(chan ended, 1)
	go func() {
		r, err := env.Primary.Internals().Interaction.Call(ctx, call)
		done <- ended{r, err}
	}()
	clk.WaitForPending(idle + 2) // the call's bound and its recheck

	ps, err := env.Primary.Internals().Interaction.Prompts.ListPrompts(ctx, store.PromptFilter{Kind: store.PromptApproval, Channel: channel, Thread: "$clocked"})
	if err != nil || len(ps) != 1 {
		t.Fatalf("prompts %+v (%v), want the one posted", ps, err)
	}
	if want := posted.Add(interaction.DefaultPromptWait); !ps[0].Deadline.Equal(want) {
		t.Errorf("deadline %v, want %v by the primary's clock", ps[0].Deadline, want)
	}
	clk.Advance(interaction.DefaultPromptWait - time.Nanosecond)
	select {
	case e := <-done:
		t.Fatalf("the call ended before its bound: %+v", e)
	default:
	}
	clk.Advance(time.Nanosecond)
	e := <-done
	if e.err != nil || e.r.Value != `{"approved":false,"decided_by":"","feedback":"Nobody decided within 280 seconds."}` {
		t.Fatalf("call ended with %+v, want not approved at its bound", e)
	}
}
