package dashboard

import (
	"crypto/sha256"
	"slices"
	"testing"
	"time"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
)

type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

func newTestSessions(perOperator int) (*sessions, *fakeClock) {
	clock := &fakeClock{now: time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC)}
	return newSessions(Config{Now: clock.Now, IdleTimeout: 30 * time.Minute, MaxAge: 2 * time.Hour, MaxSessionsPerOperator: perOperator}), clock
}

// live reports which of ss are live, without marking them used.
func live(ss *sessions, of ...*session) []bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	out := make([]bool, len(of))
	for i, s := range of {
		_, out[i] = ss.byID[s.id]
		if out[i] == (s.ended.Err() != nil) {
			panic("a session's context disagrees with the table")
		}
	}
	return out
}

func TestSessions(t *testing.T) {
	t.Run("IdsAndTokensAreRandomAndDistinct", func(t *testing.T) {
		ss, _ := newTestSessions(10)
		a := ss.create("cred", "ann", operatorv1.Role_ROLE_MEMBER)
		b := ss.create("cred", "ann", operatorv1.Role_ROLE_MEMBER)
		if a.id == b.id || a.csrf == b.csrf || a.id == a.csrf || len(a.id) < 40 {
			t.Errorf("ids %q %q, tokens %q %q", a.id, b.id, a.csrf, b.csrf)
		}
	})
	t.Run("UseKeepsASessionAliveUntilItsIdleTimeout", func(t *testing.T) {
		ss, clock := newTestSessions(10)
		s := ss.create("cred", "ann", operatorv1.Role_ROLE_MEMBER)
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
		s := ss.create("cred", "ann", operatorv1.Role_ROLE_MEMBER)
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
		s := ss.create("cred", "ann", operatorv1.Role_ROLE_MEMBER)
		ss.delete(s.id)
		if _, ok := ss.get(s.id); ok {
			t.Fatal("a deleted session is still live")
		}
	})
	t.Run("ASignInPastTheOperatorsLimitEndsItsOldestSession", func(t *testing.T) {
		ss, _ := newTestSessions(3)
		var own []*session
		for range 5 {
			own = append(own, ss.create("cred", "ann", operatorv1.Role_ROLE_MEMBER))
		}
		if got, want := live(ss, own...), []bool{false, false, true, true, true}; !slices.Equal(got, want) {
			t.Fatalf("live %v, want %v", got, want)
		}
	})
	t.Run("AnotherOperatorsSignInsNeverEndASession", func(t *testing.T) {
		ss, _ := newTestSessions(2)
		admin := ss.create("admin-cred", "ada", operatorv1.Role_ROLE_ADMIN)
		for range 10_000 {
			ss.create("cred", "ann", operatorv1.Role_ROLE_MEMBER)
		}
		if !live(ss, admin)[0] || len(ss.byOperator["ann"]) != 2 || len(ss.byID) != 3 {
			t.Fatalf("admin live %v, ann has %d sessions, %d in all; want the admin's and two of ann's",
				live(ss, admin)[0], len(ss.byOperator["ann"]), len(ss.byID))
		}
	})
	t.Run("AnExpiredSessionMakesRoomBeforeTheOldest", func(t *testing.T) {
		ss, clock := newTestSessions(2)
		oldest := ss.create("cred", "ann", operatorv1.Role_ROLE_MEMBER)
		idle := ss.create("cred", "ann", operatorv1.Role_ROLE_MEMBER)
		clock.now = clock.now.Add(20 * time.Minute)
		ss.get(oldest.id)
		clock.now = clock.now.Add(20 * time.Minute) // idle unused for 40 minutes
		ss.create("cred", "ann", operatorv1.Role_ROLE_MEMBER)
		if got := live(ss, oldest, idle); !slices.Equal(got, []bool{true, false}) {
			t.Fatalf("oldest, idle live %v; want the idle one ended", got)
		}
	})
	t.Run("ARevokedCredentialEndsItsSessionsAndOnlyThose", func(t *testing.T) {
		ss, _ := newTestSessions(4)
		a1 := ss.create("ann-cred", "ann", operatorv1.Role_ROLE_MEMBER)
		a2 := ss.create("ann-cred", "ann", operatorv1.Role_ROLE_MEMBER)
		ann2 := ss.create("ann-new-cred", "ann", operatorv1.Role_ROLE_MEMBER) // ann's next credential
		b := ss.create("bea-cred", "bea", operatorv1.Role_ROLE_MEMBER)
		name, n := ss.endCredential(sha256.Sum256([]byte("ann-cred")))
		if name != "ann" || n != 2 {
			t.Fatalf("endCredential = %q, %d; want ann, 2", name, n)
		}
		if got := live(ss, a1, a2, ann2, b); !slices.Equal(got, []bool{false, false, true, true}) {
			t.Fatalf("live %v, want only the sessions of other credentials", got)
		}
		if len(ss.byOperator["ann"]) != 1 {
			t.Fatalf("ann has %d sessions counted, want 1", len(ss.byOperator["ann"]))
		}
	})
	t.Run("SignOutEndsTheSessionsRequests", func(t *testing.T) {
		ss, _ := newTestSessions(10)
		s := ss.create("cred", "ann", operatorv1.Role_ROLE_MEMBER)
		ss.delete(s.id)
		if s.ended.Err() == nil || len(ss.byOperator) != 0 {
			t.Fatalf("after sign-out: context %v, operators %v", s.ended.Err(), ss.byOperator)
		}
	})
	t.Run("CSRFTokenMustMatchExactly", func(t *testing.T) {
		ss, _ := newTestSessions(10)
		s := ss.create("cred", "ann", operatorv1.Role_ROLE_MEMBER)
		for token, want := range map[string]bool{s.csrf: true, "": false, s.csrf + "x": false, s.csrf[:len(s.csrf)-1]: false} {
			if got := s.checkCSRF(token); got != want {
				t.Errorf("checkCSRF(%q) = %v, want %v", token, got, want)
			}
		}
	})
}
