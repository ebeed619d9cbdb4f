package response

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/clock/clocktest"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/catalog"
)

// TestOpenBounds: a runtime credential may hold MaxOpenPerCredential responses and the primary
// MaxOpen; the one past either is refused as a limit naming it, and closing one makes room.
// Responses the primary opens for itself count but are never refused.
func TestOpenBounds(t *testing.T) {
	m := NewManager(Config{Settings: Settings{MaxOpen: 5, MaxOpenPerCredential: 3}, Registry: catalog.NewRegistry()})
	t.Cleanup(m.CloseAll)
	spec := Spec{Agent: "tester"}
	open := func(opts ...OpenOption) (*Response, error) { return m.Open(spec, opts...) }

	t.Run("CredentialMaximumPassesOneOverFails", func(t *testing.T) {
		var first *Response
		for i := range 3 {
			r, err := open(ByCredential("a"))
			if err != nil {
				t.Fatalf("response %d of credential a: %v", i+1, err)
			}
			if i == 0 {
				first = r
			}
		}
		_, err := open(ByCredential("a"))
		if !fault.Is(err, fault.LimitExceeded) || !strings.Contains(err.Error(), "--max-open-responses-per-credential") {
			t.Fatalf("fourth response of credential a: %v, want a limit naming --max-open-responses-per-credential", err)
		}
		first.Close()
		r, err := open(ByCredential("a"))
		if err != nil {
			t.Fatalf("after a close, credential a: %v", err)
		}
		_ = r
	})

	t.Run("PrimaryMaximumPassesOneOverFails", func(t *testing.T) {
		if _, err := open(ByCredential("b")); err != nil { // 4 of 5
			t.Fatal(err)
		}
		fifth, err := open(ByCredential("b"))
		if err != nil {
			t.Fatalf("the fifth response on the primary: %v", err)
		}
		_, err = open(ByCredential("c"))
		if !fault.Is(err, fault.LimitExceeded) || !strings.Contains(err.Error(), "--max-open-responses)") {
			t.Fatalf("sixth response: %v, want a limit naming --max-open-responses", err)
		}
		fifth.Close()
		if _, err := open(ByCredential("c")); err != nil {
			t.Fatalf("after a close: %v", err)
		}
	})

	t.Run("PrimaryOwnResponsesAreNeverRefused", func(t *testing.T) {
		r, err := open() // the primary is full: 5 of 5
		if err != nil {
			t.Fatalf("a response the primary opens for itself: %v", err)
		}
		if m.Len() != 6 {
			t.Fatalf("%d responses open, want 6", m.Len())
		}
		r.Close()
	})

	t.Run("InvalidSpecTakesNoPlace", func(t *testing.T) {
		m := NewManager(Config{Settings: Settings{MaxOpen: 1, MaxOpenPerCredential: 1}, Registry: catalog.NewRegistry()})
		t.Cleanup(m.CloseAll)
		if _, err := m.Open(Spec{Agent: "-bad"}, ByCredential("a")); err == nil {
			t.Fatal("an invalid spec opened")
		}
		if _, err := m.Open(spec, ByCredential("a")); err != nil {
			t.Fatalf("the refused spec held a place: %v", err)
		}
	})
}

// TestReapExpired: a sweep closes the responses whose grant expired, with their windows and
// receipts, leaves live ones alone, and closes at most its limit.
func TestReapExpired(t *testing.T) {
	clock := clocktest.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m := NewManager(Config{Registry: catalog.NewRegistry(), Clock: clock})
	t.Cleanup(m.CloseAll)

	short := make([]*Response, 3)
	for i := range short {
		r, err := m.Open(Spec{Agent: "tester", GrantLifetime: time.Minute}, ByCredential("a"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.OpenWindow("bash-1"); err != nil {
			t.Fatal(err)
		}
		short[i] = r
	}
	long, err := m.Open(Spec{Agent: "tester", GrantLifetime: time.Hour}, ByCredential("a"))
	if err != nil {
		t.Fatal(err)
	}

	clock.Advance(time.Minute - time.Nanosecond)
	if n := m.ReapExpired(10); n != 0 {
		t.Fatalf("a sweep before any grant expired closed %d responses", n)
	}
	clock.Advance(time.Nanosecond)
	if n := m.ReapExpired(2); n != 2 {
		t.Fatalf("a sweep limited to 2 closed %d responses", n)
	}
	if n := m.ReapExpired(10); n != 1 {
		t.Fatalf("the next sweep closed %d responses, want the 1 left", n)
	}
	for _, r := range short {
		if !r.Closed() {
			t.Errorf("response %s outlived its grant", r.ID())
		}
		if _, ok := m.Get(r.ID()); ok {
			t.Errorf("response %s is still listed", r.ID())
		}
		if w, _ := r.WindowByBashCallID("bash-1"); r.ViewWindow(w).State != "closed" {
			t.Errorf("response %s kept its window open", r.ID())
		}
	}
	if long.Closed() || m.Len() != 1 {
		t.Fatalf("the live response was reaped (closed %v, %d open)", long.Closed(), m.Len())
	}
	// Reaped responses gave their places back.
	m2 := m.openByCredentialCount("a")
	if m2 != 1 {
		t.Errorf("credential a counts %d responses, want 1", m2)
	}
}

// TestReaperSweepsOnTheManagersClock: RunReaper closes a response whose grant expired at its
// first sweep after the expiry, paced by the manager's clock, and stops when its context ends.
func TestReaperSweepsOnTheManagersClock(t *testing.T) {
	clock := clocktest.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m := NewManager(Config{Settings: Settings{ReapEvery: time.Minute}, Registry: catalog.NewRegistry(), Clock: clock})
	t.Cleanup(m.CloseAll)
	r, err := m.Open(Spec{Agent: "tester", GrantLifetime: 90 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		m.RunReaper(ctx)
	}()
	clock.WaitForPending(1)

	clock.Advance(time.Minute) // a sweep before the grant expired
	clock.Advance(time.Minute) // the first sweep after it
	<-r.ctx.Done()             // Close cancels the response's context
	if _, ok := m.Get(r.ID()); ok {
		t.Error("the reaped response is still listed")
	}
	cancel()
	<-stopped
}
