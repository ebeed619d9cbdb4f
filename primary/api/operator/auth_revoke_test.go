package operator_test

import (
	"context"
	"crypto/sha256"
	"path/filepath"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/clock/clocktest"
	"github.com/turncli/turncli/primary/api/operator"
	"github.com/turncli/turncli/primary/operators"
	"github.com/turncli/turncli/primary/secrets"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/sqlite"
)

// TestRevokedCredentialsAreAnnounced removes operators through a second handle on the
// database, as `mindroom-primary operators remove` in another process does, while nobody
// calls: Watch reads the change at its next tick and OnRevoked's subscribers hear of it.
func TestRevokedCredentialsAreAnnounced(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	path := filepath.Join(t.TempDir(), sqlite.FileName)
	open := func() *sqlite.Store {
		st, err := sqlite.Open(ctx, path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	primaryStore, cli := open(), open()
	annToken := mustAdd(t, cli, "ann", store.RoleMember)
	mustAdd(t, cli, "bea", store.RoleAdmin)
	auth, err := operator.NewTrackingAuthenticator(ctx, primaryStore, secrets.New())
	if err != nil {
		t.Fatal(err)
	}
	revoked := make(chan [sha256.Size]byte, 8)
	stop := auth.OnRevoked(func(d [sha256.Size]byte) { revoked <- d })
	clk := clocktest.NewFake(time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC))
	watched := make(chan struct{})
	go func() { defer close(watched); auth.Watch(ctx, clk, time.Second) }()
	t.Cleanup(func() { cancel(); <-watched })
	clk.WaitForPending(1)

	t.Run("ARemovedOperatorsCredentialIsAnnouncedAtTheNextTick", func(t *testing.T) {
		if err := cli.RemoveOperator(ctx, "ann"); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Second)
		if got := <-revoked; got != operators.Digest(annToken) {
			t.Fatalf("revoked %x, want ann's credential", got)
		}
	})
	t.Run("AnAddedOperatorRevokesNothing", func(t *testing.T) {
		mustAdd(t, cli, "cai", store.RoleMember)
		if _, ok, err := auth.Authenticate(ctx, operators.NewCredential()); ok || err != nil { // reads the change
			t.Fatal(ok, err)
		}
		select {
		case d := <-revoked:
			t.Fatalf("adding operators revoked %x", d)
		default:
		}
	})
	t.Run("AfterStopNothingIsAnnounced", func(t *testing.T) {
		stop()
		if err := cli.RemoveOperator(ctx, "bea"); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := auth.Authenticate(ctx, operators.NewCredential()); ok || err != nil { // reads the change
			t.Fatal(ok, err)
		}
		select {
		case d := <-revoked:
			t.Fatalf("a stopped subscriber heard of %x", d)
		default:
		}
	})
}
