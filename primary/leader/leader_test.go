package leader_test

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/pgtest"
	"github.com/turncli/turncli/primary/leader"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/postgres"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func backend(t *testing.T, url string) *leader.Postgres {
	t.Helper()
	b, err := leader.OpenPostgres(context.Background(), url)
	if err != nil {
		t.Fatalf("OpenPostgres: %v", err)
	}
	t.Cleanup(b.Close)
	return b
}

// fencedDriver is the store driver of a primary holding fence.
func fencedDriver(t *testing.T, url string, fence int64) *postgres.Driver {
	t.Helper()
	d, err := postgres.OpenDriver(context.Background(), url, postgres.Options{Fence: fence})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// audit writes one audit entry: a durable write like any other. Given hold, it waits for it
// between its write and its commit: a write in flight (the driver checks the fence with a
// transaction's first statement).
// audit writes one audit entry through d. With hold, the transaction stays open once the
// entry is written (and the fence read, so held) until hold closes, and inFlight is closed
// as it starts to wait.
func audit(ctx context.Context, d *postgres.Driver, inFlight chan<- struct{}, hold <-chan struct{}) error {
	return d.Update(ctx, func(tx store.Tx) error {
		_, err := tx.QueueAudit(ctx, store.NewAuditEntry{Actor: "primary", Action: "test.write", Detail: []byte(`{}`)}, time.Now())()
		if hold != nil {
			close(inFlight)
			<-hold
		}
		return err
	})
}

func acquire(t *testing.T, b *leader.Postgres, holder string, ttl time.Duration) (leader.Lease, bool) {
	t.Helper()
	l, ok, err := b.Acquire(context.Background(), holder, holder+":7420", ttl)
	if err != nil {
		t.Fatalf("Acquire(%s): %v", holder, err)
	}
	return l, ok
}

func TestLease(t *testing.T) {
	ctx := context.Background()

	t.Run("OfTwoContendersExactlyOneLeads", func(t *testing.T) {
		url := pgtest.NewDatabase(t)
		a, b := backend(t, url), backend(t, url)
		var wg sync.WaitGroup
		leases := make([]leader.Lease, 2)
		took := make([]bool, 2)
		for i, be := range []*leader.Postgres{a, b} {
			wg.Go(func() { leases[i], took[i] = acquire(t, be, []string{"a", "b"}[i], time.Minute) })
		}
		wg.Wait()
		if took[0] == took[1] {
			t.Fatalf("took %v: want exactly one leader", took)
		}
		if leases[0] != leases[1] {
			t.Errorf("the contenders see different leases: %+v and %+v", leases[0], leases[1])
		}
		cur, err := a.Current(ctx)
		if err != nil || cur != leases[0] || cur.Fence <= 0 {
			t.Errorf("Current = %+v, %v; want %+v", cur, err, leases[0])
		}
	})

	t.Run("ExpiryHandsOverWithAGreaterFenceAndTheOldHolderCannotRenew", func(t *testing.T) {
		url := pgtest.NewDatabase(t)
		a, b := backend(t, url), backend(t, url)
		// Long enough that b's attempt lands inside it on a loaded machine (the database's
		// clock decides expiry, so the test cannot fake it), short enough to wait out.
		const ttl = 2 * time.Second
		la, ok := acquire(t, a, "a", ttl)
		if !ok {
			t.Fatal("a did not take a free lease")
		}
		if l, ok := acquire(t, b, "b", time.Minute); ok || l != la {
			t.Fatalf("b during a's lease: took %v, sees %+v; want a's %+v", ok, l, la)
		}
		time.Sleep(ttl + 200*time.Millisecond)
		if cur, err := b.Current(ctx); err != nil || cur.Held() {
			t.Fatalf("Current after expiry = %+v, %v; want none", cur, err)
		}
		lb, ok := acquire(t, b, "b", time.Minute)
		if !ok || lb.Fence <= la.Fence {
			t.Fatalf("b after expiry: took %v, fence %d; want it taken with a fence above %d", ok, lb.Fence, la.Fence)
		}
		if err := a.Renew(ctx, la, time.Minute); !errors.Is(err, leader.ErrLost) {
			t.Errorf("a's renewal after the takeover: %v, want ErrLost", err)
		}
		if err := a.Release(ctx, la); err != nil {
			t.Fatal(err)
		}
		if cur, _ := a.Current(ctx); cur != lb {
			t.Errorf("a's release of its old lease ended b's: Current = %+v", cur)
		}
	})

	t.Run("ReleaseLetsAnotherTakeOverAtOnce", func(t *testing.T) {
		url := pgtest.NewDatabase(t)
		a, b := backend(t, url), backend(t, url)
		la, _ := acquire(t, a, "a", time.Hour)
		if err := a.Release(ctx, la); err != nil {
			t.Fatal(err)
		}
		if lb, ok := acquire(t, b, "b", time.Minute); !ok || lb.Fence <= la.Fence {
			t.Fatalf("b after a's release: took %v, fence %d", ok, lb.Fence)
		}
	})
}

func TestFencing(t *testing.T) {
	ctx := context.Background()
	notLeader := func(t *testing.T, err error) {
		t.Helper()
		if !errors.Is(err, postgres.ErrNotLeader) || !fault.Is(err, fault.Unavailable) {
			t.Fatalf("write of the old leader: %v; want ErrNotLeader (Unavailable)", err)
		}
	}

	t.Run("AnOldLeadersWriteIsRefusedAfterATakeover", func(t *testing.T) {
		url := pgtest.NewDatabase(t)
		a, b := backend(t, url), backend(t, url)
		la, _ := acquire(t, a, "a", 100*time.Millisecond)
		old := fencedDriver(t, url, la.Fence)
		if err := audit(ctx, old, nil, nil); err != nil {
			t.Fatalf("the leader's write: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
		lb, ok := acquire(t, b, "b", time.Minute)
		if !ok {
			t.Fatal("b did not take the expired lease")
		}
		notLeader(t, audit(ctx, old, nil, nil))
		if err := audit(ctx, fencedDriver(t, url, lb.Fence), nil, nil); err != nil {
			t.Fatalf("the new leader's write: %v", err)
		}
	})

	t.Run("ATakeoverWaitsForTheOldLeadersWriteInFlight", func(t *testing.T) {
		url := pgtest.NewDatabase(t)
		a, b := backend(t, url), backend(t, url)
		la, _ := acquire(t, a, "a", 100*time.Millisecond)
		old := fencedDriver(t, url, la.Fence)
		inFlight, hold := make(chan struct{}), make(chan struct{})
		wrote := make(chan error, 1)
		go func() { wrote <- audit(ctx, old, inFlight, hold) }()
		select {
		case <-inFlight: // the write holds the fence
		case err := <-wrote:
			t.Fatalf("the write ended before it was held: %v", err)
		}
		time.Sleep(200 * time.Millisecond) // the lease expires
		took := make(chan bool, 1)
		go func() { _, ok := acquire(t, b, "b", time.Minute); took <- ok }()
		select {
		case <-took:
			t.Fatal("the takeover finished while the old leader's write was in flight")
		case <-time.After(300 * time.Millisecond):
		}
		close(hold)
		if err := <-wrote; err != nil {
			t.Fatalf("the write that began before the takeover: %v", err)
		}
		if !<-took {
			t.Fatal("b did not take the lease once the write committed")
		}
		notLeader(t, audit(ctx, old, nil, nil))
	})

	t.Run("AWriteBegunDuringATakeoverIsRefusedWhenItCommits", func(t *testing.T) {
		url := pgtest.NewDatabase(t)
		a := backend(t, url)
		la, _ := acquire(t, a, "a", time.Minute)
		old := fencedDriver(t, url, la.Fence)
		// A takeover's transaction, held open after it wrote the new fence.
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `UPDATE leader_fence SET fence = nextval('leader_fence_seq') WHERE id = 1`); err != nil {
			t.Fatal(err)
		}
		wrote := make(chan error, 1)
		go func() { wrote <- audit(ctx, old, nil, nil) }()
		select {
		case err := <-wrote:
			t.Fatalf("the old leader's write did not wait for the takeover: %v", err)
		case <-time.After(300 * time.Millisecond):
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		notLeader(t, <-wrote)
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE action = 'test.write'`).Scan(&n); err != nil || n != 0 {
			t.Errorf("audit rows of the refused write: %d (%v), want 0", n, err)
		}
	})
}
