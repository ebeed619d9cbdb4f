package dashboard

import (
	"testing"
	"time"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
)

type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

func newTestSessions(limit int) (*sessions, *fakeClock) {
	clock := &fakeClock{now: time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC)}
	return newSessions(Config{Now: clock.Now, IdleTimeout: 30 * time.Minute, MaxAge: 2 * time.Hour, MaxSessions: limit}), clock
}

func TestSessions(t *testing.T) {
	t.Run("IdsAndTokensAreRandomAndDistinct", func(t *testing.T) {
		ss, _ := newTestSessions(10)
		a, _ := ss.create("cred", "ann", operatorv1.Role_ROLE_MEMBER)
		b, _ := ss.create("cred", "ann", operatorv1.Role_ROLE_MEMBER)
		if a.id == b.id || a.csrf == b.csrf || a.id == a.csrf || len(a.id) < 40 {
			t.Errorf("ids %q %q, tokens %q %q", a.id, b.id, a.csrf, b.csrf)
		}
	})
	t.Run("UseKeepsASessionAliveUntilItsIdleTimeout", func(t *testing.T) {
		ss, clock := newTestSessions(10)
		s, _ := ss.create("cred", "ann", operatorv1.Role_ROLE_MEMBER)
		clock.now = clock.now.Add(29 * time.Minute)
		if _, ok := ss.get(s.id); !ok {
			t.Fatal("a session used within its idle timeout ended")
		}
		clock.now = clock.now.Add(30 * time.Minute)
		if _, ok := ss.get(s.id); ok {
			t.Fatal("a session idle for its timeout is still live")
		}
	})
	t.Run("ASessionEndsAtItsMaximumAgeHoweverUsed", func(t *testing.T) {
		ss, clock := newTestSessions(10)
		s, _ := ss.create("cred", "ann", operatorv1.Role_ROLE_MEMBER)
		for range 7 {
			clock.now = clock.now.Add(15 * time.Minute)
			if _, ok := ss.get(s.id); !ok {
				t.Fatalf("ended after %v", clock.now.Sub(s.created))
			}
		}
		clock.now = clock.now.Add(15 * time.Minute) // two hours after sign-in, used every 15 minutes
		if _, ok := ss.get(s.id); ok {
			t.Fatal("a session past its maximum age is still live")
		}
	})
	t.Run("SignOutDeletesTheSession", func(t *testing.T) {
		ss, _ := newTestSessions(10)
		s, _ := ss.create("cred", "ann", operatorv1.Role_ROLE_MEMBER)
		ss.delete(s.id)
		if _, ok := ss.get(s.id); ok {
			t.Fatal("a deleted session is still live")
		}
	})
	t.Run("SignInBeyondTheLimitIsRefusedUntilOneExpires", func(t *testing.T) {
		ss, clock := newTestSessions(2)
		for range 2 {
			if _, err := ss.create("cred", "ann", operatorv1.Role_ROLE_MEMBER); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := ss.create("cred", "ann", operatorv1.Role_ROLE_MEMBER); err != errTooManySessions {
			t.Fatalf("third session: %v, want errTooManySessions", err)
		}
		clock.now = clock.now.Add(time.Hour)
		if _, err := ss.create("cred", "ann", operatorv1.Role_ROLE_MEMBER); err != nil {
			t.Fatalf("after the others expired: %v", err)
		}
	})
	t.Run("CSRFTokenMustMatchExactly", func(t *testing.T) {
		ss, _ := newTestSessions(10)
		s, _ := ss.create("cred", "ann", operatorv1.Role_ROLE_MEMBER)
		for token, want := range map[string]bool{s.csrf: true, "": false, s.csrf + "x": false, s.csrf[:len(s.csrf)-1]: false} {
			if got := s.checkCSRF(token); got != want {
				t.Errorf("checkCSRF(%q) = %v, want %v", token, got, want)
			}
		}
	})
}
