package dashboard

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"slices"
	"sync"
	"time"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
)

// session is one signed-in browser. The credential never leaves the server: the browser holds
// only the session's random id.
type session struct {
	id         string
	credential string // the operator's bearer credential, sent on every OperatorService call
	// digest is the credential's SHA-256 digest, by which the primary names a credential
	// that stops being valid.
	digest  [sha256.Size]byte
	name    string
	role    operatorv1.Role
	csrf    string // the token every state change must carry
	created time.Time
	// ended is done once the session ends (sign-out, expiry, a newer sign-in of the same
	// operator, or its credential revoked): requests made in it stop with it, event streams
	// and log follows included.
	ended context.Context
	end   context.CancelFunc

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
// side. Each operator has at most perOperator of them, and operators are made by admins only,
// so nothing a signed-in operator does can grow the table past that or take another
// operator's place in it.
type sessions struct {
	mu          sync.Mutex
	byID        map[string]*session
	byOperator  map[string][]*session // each operator's sessions, oldest first
	now         func() time.Time
	idle        time.Duration
	max         time.Duration
	perOperator int
}

func newSessions(cfg Config) *sessions {
	return &sessions{byID: map[string]*session{}, byOperator: map[string][]*session{}, now: cfg.Now,
		idle: cfg.IdleTimeout, max: cfg.MaxAge, perOperator: cfg.MaxSessionsPerOperator}
}

// randomToken is 32 bytes from crypto/rand, URL-safe.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

// create starts a session for an operator the server has just recognised. At the operator's
// limit it first ends that operator's expired sessions, then its oldest: a sign-in is never
// refused, and never ends another operator's session.
func (ss *sessions) create(credential, name string, role operatorv1.Role) *session {
	now := ss.now()
	ended, end := context.WithCancel(context.Background())
	s := &session{id: randomToken(), credential: credential, digest: sha256.Sum256([]byte(credential)), name: name, role: role,
		csrf: randomToken(), created: now, ended: ended, end: end, lastSeen: now}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if len(ss.byOperator[name]) >= ss.perOperator {
		for _, old := range slices.Clone(ss.byOperator[name]) {
			if ss.expiredLocked(old, now) {
				ss.endLocked(old)
			}
		}
	}
	for own := ss.byOperator[name]; len(own) >= ss.perOperator; own = ss.byOperator[name] {
		ss.endLocked(own[0])
	}
	ss.byID[s.id] = s
	ss.byOperator[name] = append(ss.byOperator[name], s)
	return s
}

// get returns the live session with id and marks it used; an expired one is ended.
func (ss *sessions) get(id string) (*session, bool) {
	now := ss.now()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.byID[id]
	if !ok {
		return nil, false
	}
	if ss.expiredLocked(s, now) {
		ss.endLocked(s)
		return nil, false
	}
	s.lastSeen = now
	return s, true
}

func (ss *sessions) expiredLocked(s *session, now time.Time) bool {
	return now.Sub(s.lastSeen) >= ss.idle || now.Sub(s.created) >= ss.max
}

// endLocked forgets a live session and stops the requests made in it.
func (ss *sessions) endLocked(s *session) {
	delete(ss.byID, s.id)
	own := slices.DeleteFunc(ss.byOperator[s.name], func(o *session) bool { return o == s })
	if len(own) == 0 {
		delete(ss.byOperator, s.name)
	} else {
		ss.byOperator[s.name] = own
	}
	s.end()
}

// delete ends a session (sign-out, or a credential the server no longer accepts).
func (ss *sessions) delete(id string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if s, ok := ss.byID[id]; ok {
		ss.endLocked(s)
	}
}

// endCredential ends every session signed in with the credential whose digest is d, and
// returns their operator and how many there were.
func (ss *sessions) endCredential(d [sha256.Size]byte) (name string, n int) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, s := range ss.byID {
		if s.digest == d {
			ss.endLocked(s)
			name, n = s.name, n+1
		}
	}
	return name, n
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
