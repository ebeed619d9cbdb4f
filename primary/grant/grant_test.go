package grant_test

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/clock"
	"github.com/turncli/turncli/internal/clock/clocktest"
	"github.com/turncli/turncli/primary/grant"
	"github.com/turncli/turncli/primary/secrets"
)

func newRegistry() (*grant.Registry[string], *clocktest.Fake) {
	c := clocktest.NewFake(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	return grant.NewRegistry[string](c, nil), c
}

func TestMintedGrantIs32RandomBytesKeptOnlyAsItsDigest(t *testing.T) {
	reg, _ := newRegistry()
	token, digest, _ := reg.Mint("r1", time.Hour)
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) != 32 {
		t.Fatalf("token %q is not 32 bytes of base64url (%v)", token, err)
	}
	if digest != grant.Digest(sha256.Sum256([]byte(token))) {
		t.Fatal("digest is not the token's SHA-256")
	}
	if strings.ContainsAny(token, " \t\r\n=+/") || len(token) > grant.MaxTokenLength {
		t.Fatalf("token %q is not a bearer-safe value", token)
	}
	seen := map[string]bool{token: true}
	for range 1000 {
		tok, _, _ := reg.Mint("r", time.Hour)
		if seen[tok] {
			t.Fatal("a grant was issued twice")
		}
		seen[tok] = true
	}
}

func TestResolve(t *testing.T) {
	reg, _ := newRegistry()
	token, _, _ := reg.Mint("r1", time.Hour)
	other, _, _ := reg.Mint("r2", time.Hour)
	for _, tc := range []struct {
		name  string
		token string
		owner string
		ok    bool
	}{
		{"LiveGrantResolvesToItsOwner", token, "r1", true},
		{"AnotherLiveGrantResolvesToItsOwner", other, "r2", true},
		{"EmptyTokenIsUnknown", "", "", false},
		{"PrefixIsUnknown", token[:len(token)-1], "", false},
		{"TokenWithASuffixIsUnknown", token + "A", "", false},
		{"OtherCaseIsUnknown", strings.ToUpper(token), "", false},
		{"TokenOver4096CharactersIsUnknown", strings.Repeat("A", grant.MaxTokenLength+1), "", false},
		{"RandomTokenIsUnknown", "9oWgkDa8hMPw4GmYE6b5fWu1L8JeQvQe0u2rO9mJ6z0", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			owner, ok := reg.Resolve(tc.token)
			if ok != tc.ok || owner != tc.owner {
				t.Fatalf("Resolve = %q, %v; want %q, %v", owner, ok, tc.owner, tc.ok)
			}
		})
	}
}

func TestExpiry(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lifetime time.Duration
		want     time.Duration
	}{
		{"LifetimeIsKept", time.Hour, time.Hour},
		{"LifetimeIsCappedAt24Hours", 48 * time.Hour, 24 * time.Hour},
		{"ZeroLifetimeMeans24Hours", 0, 24 * time.Hour},
		{"NegativeLifetimeMeans24Hours", -time.Second, 24 * time.Hour},
		{"OneNanosecondIsKept", time.Nanosecond, time.Nanosecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, c := newRegistry()
			start := c.Now()
			token, _, expires := reg.Mint("r", tc.lifetime)
			if !expires.Equal(start.Add(tc.want)) {
				t.Fatalf("expires %v, want %v", expires, start.Add(tc.want))
			}
			c.Advance(tc.want - time.Nanosecond)
			if _, ok := reg.Resolve(token); !ok {
				t.Fatal("refused a nanosecond before it expires")
			}
			c.Advance(time.Nanosecond)
			if _, ok := reg.Resolve(token); ok {
				t.Fatal("accepted at its expiry")
			}
			c.Advance(time.Hour)
			if _, ok := reg.Resolve(token); ok {
				t.Fatal("accepted after its expiry")
			}
		})
	}
}

func TestMintUntilExpiresWithTheGrantItFollows(t *testing.T) {
	reg, c := newRegistry()
	_, _, expires := reg.MintForJob("r", 72*time.Hour) // past the 24 hours Mint caps at
	c.Advance(time.Hour)
	token, digest := reg.MintUntil("r", expires)
	if digest != grant.Digest(sha256.Sum256([]byte(token))) {
		t.Fatal("digest is not the token's SHA-256")
	}
	c.Advance(expires.Sub(c.Now()) - time.Nanosecond)
	if owner, ok := reg.Resolve(token); !ok || owner != "r" {
		t.Fatalf("Resolve a nanosecond before the expiry = %q, %v", owner, ok)
	}
	c.Advance(time.Nanosecond)
	if _, ok := reg.Resolve(token); ok {
		t.Fatal("accepted at the expiry it follows")
	}
}

func TestExpiryByTheSystemClock(t *testing.T) {
	reg := grant.NewRegistry[string](nil, nil) // the monotonic clock alone, as the primary runs it
	live, _, expires := reg.Mint("r1", time.Hour)
	if d := time.Until(expires); d <= 59*time.Minute || d > time.Hour {
		t.Fatalf("a grant for an hour expires in %v", d)
	}
	brief, _, expires := reg.Mint("r2", time.Millisecond)
	time.Sleep(time.Until(expires) + time.Millisecond)
	if _, ok := reg.Resolve(brief); ok {
		t.Error("accepted after its expiry")
	}
	if owner, ok := reg.Resolve(live); !ok || owner != "r1" {
		t.Errorf("Resolve = %q, %v; want the live grant's owner", owner, ok)
	}
}

func TestRevokedGrantIsRefusedFromItsNextUse(t *testing.T) {
	reg, _ := newRegistry()
	token, digest, _ := reg.Mint("r1", time.Hour)
	other, _, _ := reg.Mint("r2", time.Hour)
	if reg.Len() != 2 {
		t.Fatalf("Len %d", reg.Len())
	}
	reg.Revoke(digest)
	if _, ok := reg.Resolve(token); ok {
		t.Fatal("a revoked grant resolved")
	}
	if owner, ok := reg.Resolve(other); !ok || owner != "r2" {
		t.Fatal("revoking one grant affected another")
	}
	reg.Revoke(digest) // again: nothing happens
	if reg.Len() != 1 {
		t.Fatalf("Len %d", reg.Len())
	}
}

func TestResolveFindsEachOfManyGrants(t *testing.T) {
	reg, _ := newRegistry()
	const n = 20000
	tokens := make([]string, n)
	for i := range tokens {
		tokens[i], _, _ = reg.Mint(string(rune('a'+i%26))+strings.Repeat("x", i%7), time.Hour)
	}
	for i, tok := range tokens {
		if owner, ok := reg.Resolve(tok); !ok || owner != string(rune('a'+i%26))+strings.Repeat("x", i%7) {
			t.Fatalf("grant %d resolved to %q, %v", i, owner, ok)
		}
	}
}

func TestConcurrentMintResolveRevoke(t *testing.T) {
	reg, _ := newRegistry()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				tok, d, _ := reg.Mint("r", time.Hour)
				if _, ok := reg.Resolve(tok); !ok {
					t.Error("a fresh grant did not resolve")
				}
				reg.Revoke(d)
				if _, ok := reg.Resolve(tok); ok {
					t.Error("a revoked grant resolved")
				}
			}
		})
	}
	wg.Wait()
	if reg.Len() != 0 {
		t.Fatalf("Len %d after revoking everything", reg.Len())
	}
}

func BenchmarkResolveWithManyLiveGrants(b *testing.B) {
	for _, n := range []int{10, 100000} {
		b.Run(fmt.Sprintf("%dLiveGrants", n), func(b *testing.B) {
			reg := grant.NewRegistry[string](clock.System, nil) // as the primary runs it
			var tok string
			for range n {
				tok, _, _ = reg.Mint("r", time.Hour)
			}
			b.ResetTimer()
			for b.Loop() {
				reg.Resolve(tok)
			}
		})
	}
}

func TestLiveGrantsAreRedactedUntilRevoked(t *testing.T) {
	live := secrets.New()
	c := clocktest.NewFake(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	reg := grant.NewRegistry[string](c, live)
	token, digest, _ := reg.Mint("r1", time.Hour)
	job, jobDigest, _ := reg.MintForJob("r2", 48*time.Hour)
	if !secrets.TokenShaped(token) || !secrets.TokenShaped(job) {
		t.Fatalf("grants %q and %q are not token-shaped, so a scan would not find them", token, job)
	}
	if got := live.Redact("a " + token + " b " + job); got != "a (redacted) b (redacted)" {
		t.Fatalf("live grants redacted as %q", got)
	}
	reg.Revoke(digest)
	reg.Revoke(digest) // twice: the second changes nothing
	if got := live.Redact(token + " " + job); got != token+" (redacted)" {
		t.Fatalf("after revoking one grant: %q, want only the other redacted", got)
	}
	reg.Revoke(jobDigest)
	if live.Len() != 0 {
		t.Fatalf("%d secrets live after every grant was revoked", live.Len())
	}
}
