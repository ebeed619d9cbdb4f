package secrets

import (
	"crypto/sha256"
	"sync"
)

// Digest is the SHA-256 of a secret.
type Digest = [sha256.Size]byte

// TokenLength is the length of every credential the primary mints: 32 bytes in unpadded
// base64url.
const TokenLength = 43

// MinLength is the shortest secret of another shape that is redacted: a shorter value would
// match ordinary text.
const MinLength = 8

// Registry is the set of live secrets. Its methods are safe for concurrent use. A secret added
// twice (two owners hold it) stays live until it is removed twice.
type Registry struct {
	mu sync.RWMutex
	// digests holds the token-shaped secrets by digest, with how many owners hold each.
	digests map[Digest]int
	// others holds the secrets of other shapes in clear, with how many owners hold each.
	others map[string]int
	// refreshers bring owners' secrets up to date before each scan.
	refreshers []func()
}

// New returns an empty Registry.
func New() *Registry {
	return &Registry{digests: make(map[Digest]int), others: make(map[string]int)}
}

// AddDigest makes the token-shaped secret with digest d live.
func (r *Registry) AddDigest(d Digest) {
	r.mu.Lock()
	r.digests[d]++
	r.mu.Unlock()
}

// RemoveDigest drops one hold on the secret with digest d.
func (r *Registry) RemoveDigest(d Digest) {
	r.mu.Lock()
	if n := r.digests[d]; n > 1 {
		r.digests[d] = n - 1
	} else {
		delete(r.digests, d)
	}
	r.mu.Unlock()
}

// Add makes secret live: by its digest when it is token-shaped, in clear otherwise. A value
// shorter than MinLength is not a secret this registry can redact and is ignored.
func (r *Registry) Add(secret string) {
	switch {
	case TokenShaped(secret):
		r.AddDigest(sha256.Sum256([]byte(secret)))
	case len(secret) >= MinLength:
		r.mu.Lock()
		r.others[secret]++
		r.mu.Unlock()
	}
}

// Remove drops one hold on secret.
func (r *Registry) Remove(secret string) {
	switch {
	case TokenShaped(secret):
		r.RemoveDigest(sha256.Sum256([]byte(secret)))
	case len(secret) >= MinLength:
		r.mu.Lock()
		if n := r.others[secret]; n > 1 {
			r.others[secret] = n - 1
		} else {
			delete(r.others, secret)
		}
		r.mu.Unlock()
	}
}

// BeforeScan adds a function every scan calls first, so that an owner whose secrets can change
// behind its back brings them up to date (the operator index, when another process added an
// operator). It must be cheap when nothing changed, and must not wait for a scan.
func (r *Registry) BeforeScan(refresh func()) {
	r.mu.Lock()
	r.refreshers = append(r.refreshers, refresh)
	r.mu.Unlock()
}

func (r *Registry) refresh() {
	r.mu.RLock()
	fs := r.refreshers
	r.mu.RUnlock()
	for _, f := range fs {
		f()
	}
}

// Len reports how many distinct secrets are live.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.digests) + len(r.others)
}

// MaxLength is the length of the longest live secret, in bytes: a text cut anywhere is
// redacted safely when at least MaxLength-1 bytes on each side of the cut are scanned with it.
func (r *Registry) MaxLength() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	n := TokenLength
	for s := range r.others {
		n = max(n, len(s))
	}
	return n
}

// base64url marks the bytes of the unpadded base64url alphabet.
var base64url = func() (t [256]bool) {
	for _, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_" {
		t[c] = true
	}
	return t
}()

// tokenEnd marks the bytes that can end the encoding of 32 bytes: its last character carries
// the final 4 bits and two zero bits, so its alphabet index is a multiple of 4.
var tokenEnd = func() (t [256]bool) {
	for _, c := range "AEIMQUYcgkosw048" {
		t[c] = true
	}
	return t
}()

// TokenShaped reports whether s has the shape of a minted credential: TokenLength base64url
// characters, the last one able to end the encoding of 32 bytes.
func TokenShaped(s string) bool {
	if len(s) != TokenLength || !tokenEnd[s[TokenLength-1]] {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !base64url[s[i]] {
			return false
		}
	}
	return true
}
