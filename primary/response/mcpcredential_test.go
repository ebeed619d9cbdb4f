package response

import (
	"strings"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/clock/clocktest"
	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/secrets"
)

func TestMCPCredential(t *testing.T) {
	open := func(t *testing.T, spec Spec) (*Manager, *Response, *secrets.Registry, *clocktest.Fake) {
		t.Helper()
		live := secrets.New()
		clk := clocktest.NewFake(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
		m := NewManager(Config{Registry: catalog.NewRegistry(), Secrets: live, Clock: clk})
		r, err := m.Open(spec)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Close)
		return m, r, live, clk
	}
	t.Run("OpensOnlyItsResponseAndIsNotTheGrant", func(t *testing.T) {
		m, r, _, _ := open(t, Spec{Agent: "tester"})
		_, other, _, _ := open(t, Spec{Agent: "tester"})
		token, err := r.MintMCPCredential()
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := m.AuthenticateMCP(token); !ok || got != r {
			t.Fatalf("AuthenticateMCP = %v, %v; want the response", got, ok)
		}
		if token == r.token {
			t.Fatal("the MCP credential is the grant")
		}
		if _, ok := m.AuthenticateMCP(r.token); ok {
			t.Fatal("the Agent CLI grant opened the MCP endpoint")
		}
		if _, ok := m.Authenticate(token, LocalPath); ok {
			t.Fatal("the MCP credential opened the Agent CLI")
		}
		if _, ok := m.AuthenticateMCP(other.token); ok {
			t.Fatal("another response's grant opened the MCP endpoint")
		}
	})
	t.Run("IsIssuedOnce", func(t *testing.T) {
		_, r, _, _ := open(t, Spec{Agent: "tester"})
		if _, err := r.MintMCPCredential(); err != nil {
			t.Fatal(err)
		}
		if _, err := r.MintMCPCredential(); err == nil || !strings.Contains(err.Error(), "already issued") {
			t.Fatalf("a second mint = %v, want already issued", err)
		}
	})
	t.Run("IsRevokedWhenTheResponseCloses", func(t *testing.T) {
		m, r, live, _ := open(t, Spec{Agent: "tester"})
		token, err := r.MintMCPCredential()
		if err != nil {
			t.Fatal(err)
		}
		if got := live.Redact("token " + token); strings.Contains(got, token) {
			t.Fatalf("a live MCP credential was not redacted: %q", got)
		}
		r.Close()
		if _, ok := m.AuthenticateMCP(token); ok {
			t.Fatal("a closed response's MCP credential was accepted")
		}
		if got := live.Redact(token); got != token {
			t.Fatalf("a revoked credential is still tracked as live: %q", got)
		}
		if _, err := r.MintMCPCredential(); !ErrClosed(err) {
			t.Fatalf("mint on a closed response = %v, want closed", err)
		}
	})
	t.Run("ExpiresWithTheGrant", func(t *testing.T) {
		m, r, _, clk := open(t, Spec{Agent: "tester", GrantLifetime: time.Hour})
		clk.Advance(time.Minute)
		token, err := r.MintMCPCredential()
		if err != nil {
			t.Fatal(err)
		}
		clk.Advance(r.GrantExpires().Sub(clk.Now()) - time.Nanosecond)
		if _, ok := m.AuthenticateMCP(token); !ok {
			t.Fatal("refused a nanosecond before the grant expires")
		}
		clk.Advance(time.Nanosecond)
		if _, ok := m.AuthenticateMCP(token); ok {
			t.Fatal("accepted once the grant expired")
		}
	})
}
