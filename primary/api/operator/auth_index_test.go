package operator_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/faultgrpc"
	"github.com/turncli/turncli/primary/api/operator"
	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/operators"
	"github.com/turncli/turncli/primary/secrets"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/sqlite"
)

// countingOperators is the real store with every operator read and write counted.
type countingOperators struct {
	*sqlite.Store
	calls atomic.Int64
}

func (c *countingOperators) ListOperators(ctx context.Context) ([]store.Operator, error) {
	c.calls.Add(1)
	return c.Store.ListOperators(ctx)
}

func (c *countingOperators) CreateOperator(ctx context.Context, o store.NewOperator) (store.Operator, error) {
	c.calls.Add(1)
	return c.Store.CreateOperator(ctx, o)
}

func (c *countingOperators) CreateFirstOperator(ctx context.Context, o store.NewOperator) (store.Operator, bool, error) {
	c.calls.Add(1)
	return c.Store.CreateFirstOperator(ctx, o)
}

func (c *countingOperators) RemoveOperator(ctx context.Context, name string) error {
	c.calls.Add(1)
	return c.Store.RemoveOperator(ctx, name)
}

// TestUnknownCredentialsNeverReadTheStore serves OperatorService over bufconn behind an
// authenticator whose store counts its calls, with a second handle on the same database
// standing for `mindroom-primary operators` in another process.
func TestUnknownCredentialsNeverReadTheStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), sqlite.FileName)
	open := func() *sqlite.Store {
		st, err := sqlite.Open(ctx, path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	counted := &countingOperators{Store: open()}
	cli := open()
	adaToken := mustAdd(t, cli, "ada", store.RoleAdmin)

	live := secrets.New()
	auth, err := operator.NewTrackingAuthenticator(ctx, counted, live)
	if err != nil {
		t.Fatal(err)
	}
	if got := live.Redact(adaToken); got != "(redacted)" {
		t.Fatalf("an operator's credential is not a live secret: %q", got)
	}
	gs := grpc.NewServer(grpc.ChainUnaryInterceptor(faultgrpc.UnaryServerInterceptor(nil), auth.UnaryInterceptor()))
	cfg := testEngines(t, counted.Store, t.TempDir(), catalog.NewRegistry())
	cfg.Store = counted
	operatorv1.RegisterOperatorServiceServer(gs, newServer(t, cfg))
	lis := bufconn.Listen(1 << 20)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	whoami := func(token string) (string, error) {
		got, err := operatorv1.NewOperatorServiceClient(dialBufconn(t, lis, token)).WhoAmI(ctx, &operatorv1.WhoAmIRequest{})
		return got.GetName(), err
	}

	t.Run("AThousandUnknownCredentialsReadNothing", func(t *testing.T) {
		before := counted.calls.Load()
		conn := operatorv1.NewOperatorServiceClient(dialBufconn(t, lis, "unknown-credential-of-a-flood-0123456789abc"))
		for i := range 1000 {
			if _, err := conn.WhoAmI(ctx, &operatorv1.WhoAmIRequest{}); status.Code(err) != codes.Unauthenticated {
				t.Fatalf("call %d with an unknown credential: %v, want UNAUTHENTICATED", i, err)
			}
			if auth.Known(ctx, operators.NewCredential()) { // what the REST edge asks
				t.Fatalf("call %d: a fresh credential is known", i)
			}
		}
		if n := counted.calls.Load() - before; n != 0 {
			t.Fatalf("2000 unknown credentials cost %d store calls, want 0", n)
		}
	})

	t.Run("KnownCredentialReadsNothing", func(t *testing.T) {
		before := counted.calls.Load()
		for range 100 {
			if name, err := whoami(adaToken); err != nil || name != "ada" {
				t.Fatalf("WhoAmI as ada = %q, %v", name, err)
			}
		}
		if n := counted.calls.Load() - before; n != 0 {
			t.Fatalf("100 calls of a known operator cost %d store calls, want 0", n)
		}
	})

	t.Run("AnOperatorAddedElsewhereIsKnownAtOnce", func(t *testing.T) {
		bobToken := mustAdd(t, cli, "bob", store.RoleMember)
		if name, err := whoami(bobToken); err != nil || name != "bob" {
			t.Fatalf("WhoAmI as bob right after he was added = %q, %v", name, err)
		}
		if got := live.Redact(bobToken); got != "(redacted)" {
			t.Fatalf("the new operator's credential is not a live secret: %q", got)
		}
	})

	t.Run("AnOperatorRemovedElsewhereIsRefusedAtOnce", func(t *testing.T) {
		if err := cli.RemoveOperator(ctx, "ada"); err != nil {
			t.Fatal(err)
		}
		if _, err := whoami(adaToken); status.Code(err) != codes.Unauthenticated {
			t.Fatalf("WhoAmI as ada right after she was removed: %v, want UNAUTHENTICATED", err)
		}
		if got := live.Redact(adaToken); got != adaToken {
			t.Fatalf("a removed operator's credential is still redacted: %q", got)
		}
	})
}

// BenchmarkAuthenticateUnknownCredential is what a flood of made-up credentials costs.
func BenchmarkAuthenticateUnknownCredential(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), sqlite.FileName), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	for i := range 100 {
		if _, err := operators.Add(ctx, st, "op"+string(rune('a'+i%26))+string(rune('a'+i/26)), store.RoleMember); err != nil {
			b.Fatal(err)
		}
	}
	auth := operator.NewAuthenticator(st)
	token := operators.NewCredential()
	for b.Loop() {
		if _, ok, err := auth.Authenticate(ctx, token); ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
