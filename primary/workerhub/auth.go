package workerhub

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/workermeta"
	"google.golang.org/grpc/metadata"
	"unicode/utf8"
)

// Identity is an authenticated worker.
type Identity struct {
	Key string
	ID  string
}

type identityKey struct{}

// IdentityFrom returns the worker identity the interceptor stored in ctx.
func IdentityFrom(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

// Credentials maps each worker key to the digests of the credentials configured for it.
type Credentials struct {
	byKey map[string][][sha256.Size]byte
}

// NewCredentials returns an empty set.
func NewCredentials() *Credentials {
	return &Credentials{byKey: make(map[string][][sha256.Size]byte)}
}

// Add configures token as a credential for worker key.
func (c *Credentials) Add(key, token string) {
	c.byKey[key] = append(c.byKey[key], sha256.Sum256([]byte(token)))
}

// keyFor returns the worker key a credential is configured for. Every configured digest is
// compared, in constant time, so timing tells nothing about which key matched.
func (c *Credentials) keyFor(token string) (string, bool) {
	d := sha256.Sum256([]byte(token))
	found := ""
	for key, digests := range c.byKey {
		for _, want := range digests {
			if subtle.ConstantTimeCompare(want[:], d[:]) == 1 {
				found = key
			}
		}
	}
	return found, found != ""
}

var errWorkerUnauthenticated = fault.New(fault.Unauthenticated, "missing or invalid worker credential")

// authenticate reads the worker's credential and id from ctx.
func (c *Credentials) authenticate(ctx context.Context) (Identity, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	creds, ids := md.Get(workermeta.CredentialKey), md.Get(workermeta.IDKey)
	if len(creds) != 1 || len(ids) != 1 || len(creds[0]) > 4096 {
		return Identity{}, errWorkerUnauthenticated
	}
	key, ok := c.keyFor(creds[0])
	if !ok {
		return Identity{}, errWorkerUnauthenticated
	}
	if n := utf8.RuneCountInString(ids[0]); n < 1 || n > 128 {
		return Identity{}, fault.New(fault.InvalidArgument, "worker id must be 1..128 characters")
	}
	return Identity{Key: key, ID: ids[0]}, nil
}
