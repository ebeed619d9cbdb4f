package dashboard_test

import (
	"net/http"
	"net/http/cookiejar"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/authlimit"
	"github.com/turncli/turncli/internal/clock/clocktest"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/operators"
)

// A refused sign-in counts against the browser's address; the limit never refuses a
// credential the server accepts, so the admin signs in from loopback while an attacker there
// is limited.
func TestRefusedSignInsAreLimitedPerAddress(t *testing.T) {
	clk := clocktest.NewFake(time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC))
	env := testenv.Start(t, testenv.WithConfig(func(c *primary.Config) { c.Clock = clk }))
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, CheckRedirect: noRedirects.CheckRedirect}

	t.Run("TheLimitThRefusalIsAnsweredNormally", func(t *testing.T) {
		for i := 1; i <= authlimit.DefaultBurst; i++ {
			if code, after, id := postSignin(t, client, env, operators.NewCredential()); code != http.StatusUnauthorized || after != "" || id != "" {
				t.Fatalf("refusal %d: %d, Retry-After %q, session %q; want 401 alone", i, code, after, id)
			}
		}
	})
	t.Run("TheNextIsTooManyWithRetryAfter", func(t *testing.T) {
		if code, after, id := postSignin(t, client, env, operators.NewCredential()); code != http.StatusTooManyRequests || after != "6" || id != "" {
			t.Fatalf("refusal %d: %d, Retry-After %q, session %q; want 429, 6", authlimit.DefaultBurst+1, code, after, id)
		}
		if code, _, _ := postSignin(t, client, env, ""); code != http.StatusTooManyRequests {
			t.Fatalf("an empty credential from the limited address: %d, want 429", code)
		}
	})
	t.Run("AnAdminSignsInFromTheLimitedAddress", func(t *testing.T) {
		signIn(t, env, adminToken(t, env))
	})
	t.Run("AfterRetryAfterOneMoreRefusalIsAnsweredNormally", func(t *testing.T) {
		clk.Advance(authlimit.DefaultEvery)
		if code, _, _ := postSignin(t, client, env, operators.NewCredential()); code != http.StatusUnauthorized {
			t.Fatalf("the refusal after Retry-After passed: %d, want 401", code)
		}
		if code, _, _ := postSignin(t, client, env, operators.NewCredential()); code != http.StatusTooManyRequests {
			t.Fatalf("the refusal after that: %d, want 429", code)
		}
	})
}
