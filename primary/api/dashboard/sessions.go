package dashboard

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"sync"
	"time"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
)

// errTooManySessions refuses a sign-in while MaxSessions sessions are live.
var errTooManySessions = errors.New("too many sessions are open; try again later")

// session is one signed-in browser. The credential never leaves the server: the browser holds
// only the session's random id.
type session struct {
	id         string
	credential string // the operator's bearer credential, sent on every OperatorService call
	name       string
	role       operatorv1.Role
	csrf       string // the token every state change must carry
	created    time.Time

	// Guarded by sessions.mu.
	lastSeen time.Time
	flash    string // a one-shot message for the next page
}

func (s *session) admin() bool { return s.role == operatorv1.Role_ROLE_ADMIN }

// checkCSRF compares a submitted token with the session's in constant time.
func (s *session) checkCSRF(token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.csrf)) == 1
}

// sessions keeps the live sessions in memory: a restart signs everyone out, which is the safe
// side.
type sessions struct {
	mu    sync.Mutex
	m     map[string]*session
	now   func() time.Time
	idle  time.Duration
	max   time.Duration
	limit int
}

func newSessions(cfg Config) *sessions {
	return &sessions{m: map[string]*session{}, now: cfg.Now, idle: cfg.IdleTimeout, max: cfg.MaxAge, limit: cfg.MaxSessions}
}

// randomToken is 32 bytes from crypto/rand, URL-safe.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

// create starts a session for an operator the server has just recognised.
func (ss *sessions) create(credential, name string, role operatorv1.Role) (*session, error) {
	now := ss.now()
	s := &session{id: randomToken(), credential: credential, name: name, role: role, csrf: randomToken(), created: now, lastSeen: now}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if len(ss.m) >= ss.limit {
		ss.sweepLocked(now)
		if len(ss.m) >= ss.limit {
			return nil, errTooManySessions
		}
	}
	ss.m[s.id] = s
	return s, nil
}

// get returns the live session with id and marks it used; an expired one is deleted.
func (ss *sessions) get(id string) (*session, bool) {
	now := ss.now()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.m[id]
	if !ok {
		return nil, false
	}
	if ss.expiredLocked(s, now) {
		delete(ss.m, id)
		return nil, false
	}
	s.lastSeen = now
	return s, true
}

func (ss *sessions) expiredLocked(s *session, now time.Time) bool {
	return now.Sub(s.lastSeen) >= ss.idle || now.Sub(s.created) >= ss.max
}

func (ss *sessions) sweepLocked(now time.Time) {
	for id, s := range ss.m {
		if ss.expiredLocked(s, now) {
			delete(ss.m, id)
		}
	}
}

// delete ends a session (sign-out, or a credential the server no longer accepts).
func (ss *sessions) delete(id string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.m, id)
}

// setFlash leaves a message for the session's next page.
func (ss *sessions) setFlash(s *session, msg string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s.flash = msg
}

// takeFlash returns and clears the session's message.
func (ss *sessions) takeFlash(s *session) string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	msg := s.flash
	s.flash = ""
	return msg
}
