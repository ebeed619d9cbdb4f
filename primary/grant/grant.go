// Package grant mints and resolves Agent CLI grants: the bearer tokens a response's shells
// present. It keeps only SHA-256 digests, indexed by digest so resolution costs the same with
// ten or a hundred thousand live grants, and never compares a token: only digests, whose
// comparison's timing tells nothing about any token.
//
// It does not know what a grant authorises: it maps a token to its owner (a response), and the
// owner decides the rest (shell location, windows). Grants live in memory only, so a restarted
// primary honours no old grant.
package grant

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"sync"
	"time"

	"github.com/turncli/turncli/internal/clock"
)

// MaxLifetime caps every grant's lifetime.
const MaxLifetime = 24 * time.Hour

// MaxTokenLength is the longest token (and Authorization value) ever considered.
const MaxTokenLength = 4096

// Digest is the SHA-256 of a token.
type Digest [sha256.Size]byte

// Tracker is told of every grant that becomes live and every one revoked, by digest (a
// secrets.Registry, so that live grants are redacted wherever people or logs see them).
type Tracker interface {
	AddDigest(d [sha256.Size]byte)
	RemoveDigest(d [sha256.Size]byte)
}

// Registry holds live grants. The zero value is not usable; use NewRegistry.
type Registry[T any] struct {
	clock   clock.Clock
	epoch   time.Time            // expiries are kept as offsets from it
	since   func() time.Duration // the clock's time since epoch
	tracker Tracker

	mu       sync.RWMutex
	byDigest map[Digest]entry[T]
}

// entry is kept small (a resolution over many grants misses the caches on its slot): the
// digest is its key, and the expiry an offset from the registry's epoch.
type entry[T any] struct {
	owner   T
	expires time.Duration
}

// NewRegistry returns an empty registry measuring lifetimes by clk (clock.System when nil),
// telling tracker (when not nil) of every grant minted and revoked.
func NewRegistry[T any](clk clock.Clock, tracker Tracker) *Registry[T] {
	if clk == nil {
		clk = clock.System
	}
	r := &Registry[T]{clock: clk, tracker: tracker, byDigest: make(map[Digest]entry[T])}
	r.epoch = clk.Now()
	if clk == clock.System {
		// Resolution reads the clock on every request, so it reads the system's directly:
		// time.Since of an epoch read by time.Now reads the monotonic clock alone, half the
		// cost of Now, which reads the wall clock too.
		r.since = func() time.Duration { return time.Since(r.epoch) }
	} else {
		r.since = func() time.Duration { return clk.Now().Sub(r.epoch) }
	}
	return r
}

// Mint creates a grant for owner, valid for lifetime (capped at MaxLifetime). The token is
// returned once; only its digest is kept.
func (r *Registry[T]) Mint(owner T, lifetime time.Duration) (token string, digest Digest, expires time.Time) {
	if lifetime <= 0 || lifetime > MaxLifetime {
		lifetime = MaxLifetime
	}
	return r.mint(owner, lifetime)
}

// MintForJob creates a grant for an owner that serves a background job rather than a turn (a
// background agent may run for a week): it lives for lifetime, past MaxLifetime if the job
// may run that long. Like every grant it is issued once and dies when its owner revokes it.
func (r *Registry[T]) MintForJob(owner T, lifetime time.Duration) (token string, digest Digest, expires time.Time) {
	if lifetime <= 0 {
		lifetime = MaxLifetime
	}
	return r.mint(owner, lifetime)
}

// MintUntil creates a grant for owner that expires at expires, as another grant of the same
// owner does: a second credential of one owner dies when its first does, never later.
func (r *Registry[T]) MintUntil(owner T, expires time.Time) (token string, digest Digest) {
	token, digest, _ = r.mint(owner, expires.Sub(r.clock.Now()))
	return token, digest
}

func (r *Registry[T]) mint(owner T, lifetime time.Duration) (token string, digest Digest, expires time.Time) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		panic("grant: crypto/rand failed: " + err.Error()) // never happens on Linux
	}
	token = base64.RawURLEncoding.EncodeToString(raw[:])
	digest = sha256.Sum256([]byte(token))
	expires = r.clock.Now().Add(lifetime)
	// Tracked before the token leaves this function, so it is never shown unredacted.
	if r.tracker != nil {
		r.tracker.AddDigest(digest)
	}
	r.mu.Lock()
	r.byDigest[digest] = entry[T]{owner: owner, expires: expires.Sub(r.epoch)}
	r.mu.Unlock()
	return token, digest, expires
}

// Resolve returns the owner of token if the grant is live.
//
// The index is keyed by the token's digest: the lookup compares digests of the presented token
// with digests of live ones, which tells nothing about a live token however long it takes.
func (r *Registry[T]) Resolve(token string) (owner T, ok bool) {
	if token == "" || len(token) > MaxTokenLength {
		return owner, false
	}
	d := digestOf(token)
	r.mu.RLock()
	e, found := r.byDigest[d]
	r.mu.RUnlock()
	if !found || r.since() >= e.expires {
		return owner, false
	}
	return e.owner, true
}

// digestOf hashes token without allocating for tokens of the length Mint issues (43 bytes),
// which []byte(token) would do for anything over 32 bytes: Resolve runs on every request.
func digestOf(token string) Digest {
	var buf [64]byte
	if len(token) <= len(buf) {
		return sha256.Sum256(buf[:copy(buf[:], token)])
	}
	return sha256.Sum256([]byte(token))
}

// Revoke forgets a grant; its very next use fails.
func (r *Registry[T]) Revoke(d Digest) {
	r.mu.Lock()
	_, live := r.byDigest[d]
	delete(r.byDigest, d)
	r.mu.Unlock()
	if live && r.tracker != nil {
		r.tracker.RemoveDigest(d)
	}
}

// Len reports the number of grants held (expired ones included until revoked).
func (r *Registry[T]) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.byDigest)
}
