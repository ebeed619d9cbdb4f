package leader_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/pgtest"
	"github.com/turncli/turncli/primary/leader"
)

// testTTL is the electors' lease TTL: twenty renewals, so that a loaded machine delaying a few
// of them does not end a leading.
const testTTL = 2 * time.Second

func elector(t *testing.T, b leader.Backend, holder string) *leader.Elector {
	t.Helper()
	e, err := leader.New(leader.Config{Backend: b, Holder: holder, Addr: holder + ":7420", TTL: testTTL, Renew: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func campaign(t *testing.T, e *leader.Elector, within time.Duration) leader.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	l, err := e.Campaign(ctx, nil)
	if err != nil {
		t.Fatalf("Campaign: %v", err)
	}
	return l
}

func TestElector(t *testing.T) {
	t.Run("AStandbyLearnsTheLeaderAndTakesOverWhenItReleases", func(t *testing.T) {
		url := pgtest.NewDatabase(t)
		bk := backend(t, url)
		a, b := elector(t, bk, "a"), elector(t, backend(t, url), "b")
		la := campaign(t, a, 5*time.Second)
		holdCtx, stopHolding := context.WithCancel(context.Background())
		held := make(chan error, 1)
		go func() { held <- a.Hold(holdCtx) }()

		seen := make(chan leader.Lease, 16)
		taken := make(chan leader.Lease, 1)
		go func() {
			l, err := b.Campaign(context.Background(), func(l leader.Lease) { seen <- l })
			if err != nil {
				t.Error(err)
			}
			taken <- l
		}()
		if l := <-seen; l != la {
			t.Fatalf("the standby sees %+v, want %+v", l, la)
		}
		time.Sleep(testTTL + time.Second) // past a TTL: only the renewals keep a leading
		select {
		case l := <-taken:
			t.Fatalf("the standby took the lease (%+v) while the leader renewed it", l)
		default:
		}
		stopHolding()
		if err := <-held; err != nil {
			t.Fatalf("Hold after its context ended: %v", err)
		}
		if err := a.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
		// Released, the lease is over at once: the standby need not wait for its TTL.
		if cur, err := bk.Current(context.Background()); err != nil || cur.Holder == "a" {
			t.Fatalf("after the release the live lease is %+v, %v; want none of a's", cur, err)
		}
		select {
		case lb := <-taken:
			if lb.Fence <= la.Fence || lb.Holder != "b" {
				t.Fatalf("takeover lease %+v after %+v", lb, la)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the standby did not take over a released lease")
		}
	})

	t.Run("HoldReportsTheLeaseLostOnceAnotherTookIt", func(t *testing.T) {
		url := pgtest.NewDatabase(t)
		bk := backend(t, url)
		a := elector(t, bk, "a")
		la := campaign(t, a, 5*time.Second)
		held := make(chan error, 1)
		go func() { held <- a.Hold(context.Background()) }()
		// Another holder forced in, as a takeover after a pause of a would be. a's renewal may
		// revive the lease between the two steps (no one else had taken it): try again.
		other := backend(t, url)
		for taken := false; !taken; {
			if err := bk.Release(context.Background(), la); err != nil {
				t.Fatal(err)
			}
			_, taken = acquire(t, other, "b", time.Minute)
		}
		select {
		case err := <-held:
			if !errors.Is(err, leader.ErrLost) {
				t.Fatalf("Hold: %v, want ErrLost", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Hold went on after the lease was taken over")
		}
	})

	t.Run("HoldReportsTheLeaseLostWhenNoRenewalSucceedsForATTL", func(t *testing.T) {
		url := pgtest.NewDatabase(t)
		bk := backend(t, url)
		a := elector(t, bk, "a")
		campaign(t, a, 5*time.Second)
		held := make(chan error, 1)
		go func() { held <- a.Hold(context.Background()) }()
		bk.Close() // the database out of reach
		select {
		case err := <-held:
			if !errors.Is(err, leader.ErrLost) {
				t.Fatalf("Hold: %v, want ErrLost", err)
			}
		case <-time.After(testTTL + 5*time.Second):
			t.Fatal("Hold went on without renewals")
		}
	})

	t.Run("ARenewIntervalNotWellUnderTheTTLIsRefused", func(t *testing.T) {
		if _, err := leader.New(leader.Config{Backend: &leader.Postgres{}, Holder: "a", TTL: time.Second, Renew: time.Second}); err == nil {
			t.Fatal("New accepted a renew interval equal to the TTL")
		}
	})
}
