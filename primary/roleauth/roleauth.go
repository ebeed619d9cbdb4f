// Package roleauth authorises gRPC calls by role: each service belongs to one role (runtime,
// operator, worker), and a call must carry that role's credential as a bearer token. Tokens are
// compared as SHA-256 digests in constant time, so a credential never authorises another role.
//
// It does not mint Agent CLI grants (package grant) and knows nothing about responses.
package roleauth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"strings"

	"github.com/turncli/turncli/internal/bearer"
	"github.com/turncli/turncli/internal/fault"
	"google.golang.org/grpc"
)

// Role names a kind of caller.
type Role string

// Roles of the primary's APIs.
const (
	Runtime  Role = "runtime"
	Operator Role = "operator"
	Worker   Role = "worker"
)

// SelfAuthenticated is the "role" of a service that authenticates its callers itself (workers
// present a worker credential, not a bearer token).
const SelfAuthenticated Role = "self-authenticated"

// Public is the "role" of a service anyone may call (health checks).
const Public Role = "public"

// Policy maps gRPC service names (e.g. "turncli.response.v1.ResponseService") to the role whose
// credential they require, and roles to their credential digests.
type Policy struct {
	services map[string]Role
	digests  map[Role][][sha256.Size]byte
}

// NewPolicy returns an empty policy: every call is refused until services and credentials are
// added.
func NewPolicy() *Policy {
	return &Policy{services: make(map[string]Role), digests: make(map[Role][][sha256.Size]byte)}
}

// Service says that every method of service requires role.
func (p *Policy) Service(service string, role Role) *Policy {
	p.services[service] = role
	return p
}

// Credential adds a credential for role.
func (p *Policy) Credential(role Role, token string) *Policy {
	p.digests[role] = append(p.digests[role], sha256.Sum256([]byte(token)))
	return p
}

var errUnauthenticated = fault.New(fault.Unauthenticated, "missing or invalid credential for this API")

// authorize checks the bearer token in ctx for the service of fullMethod.
func (p *Policy) authorize(ctx context.Context, fullMethod string) error {
	service, _, ok := strings.Cut(strings.TrimPrefix(fullMethod, "/"), "/")
	if !ok {
		return errUnauthenticated
	}
	role, ok := p.services[service]
	if !ok {
		return fault.New(fault.PermissionDenied, "service is not exposed")
	}
	if role == SelfAuthenticated || role == Public {
		return nil
	}
	token, ok := bearer.FromIncomingContext(ctx)
	if !ok {
		return errUnauthenticated
	}
	d := sha256.Sum256([]byte(token))
	match := 0
	for _, want := range p.digests[role] {
		match |= subtle.ConstantTimeCompare(want[:], d[:])
	}
	if match != 1 {
		return errUnauthenticated
	}
	return nil
}

// UnaryInterceptor authorises unary calls.
func (p *Policy) UnaryInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if err := p.authorize(ctx, info.FullMethod); err != nil {
			return nil, err
		}
		return h(ctx, req)
	}
}

// StreamInterceptor authorises streaming calls.
func (p *Policy) StreamInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		if err := p.authorize(ss.Context(), info.FullMethod); err != nil {
			return err
		}
		return h(srv, ss)
	}
}

// KnownCredential reports whether token is a credential of any role, comparing against every
// digest in constant time. An HTTP edge uses it to refuse requests before reading their bodies.
func (p *Policy) KnownCredential(token string) bool {
	if token == "" || len(token) > 4096 {
		return false
	}
	d := sha256.Sum256([]byte(token))
	match := 0
	for _, digests := range p.digests {
		for _, want := range digests {
			match |= subtle.ConstantTimeCompare(want[:], d[:])
		}
	}
	return match == 1
}
