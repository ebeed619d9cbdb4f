package operator

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"strings"
	"sync"
	"time"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/bearer"
	"github.com/turncli/turncli/internal/clock"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/operators"
	"github.com/turncli/turncli/primary/store"
	"google.golang.org/grpc"
)

var methodPrefix = "/" + operatorv1.OperatorService_ServiceDesc.ServiceName + "/"

var errUnauthenticated = fault.New(fault.Unauthenticated, "missing or invalid operator credential")

// Authenticator finds the operator a credential belongs to, from an index of the operators'
// credential digests kept in memory: an unknown credential costs a hash, a map lookup and a
// load of the store's change counter from shared memory, never a read of the store. The index
// is read again from the store only when the store's stamp says operators were created or
// removed (by `mindroom-primary operators` in another process too), so a change takes effect
// at the next call, or at the next tick of Watch when nobody calls.
type Authenticator struct {
	ops     store.Operators
	changes store.OperatorChanges // nil: the store cannot tell, and is read on every call
	live    SecretTracker         // nil: nobody is told

	subsMu  sync.Mutex
	subsSeq uint64
	subs    map[uint64]func(digest [sha256.Size]byte) // OnRevoked's

	reload sync.Mutex // one reload at a time
	mu     sync.RWMutex
	loaded bool
	stamp  uint64
	index  map[[sha256.Size]byte]store.Operator
}

// SecretTracker is told of every operator credential that becomes valid and every one that
// stops being valid, by digest (a secrets.Registry, so that operators' credentials are redacted
// wherever people or logs see them).
type SecretTracker interface {
	AddDigest(d [sha256.Size]byte)
	RemoveDigest(d [sha256.Size]byte)
}

// NewAuthenticator returns an authenticator over ops, which reads the operators at its first
// call.
func NewAuthenticator(ops store.Operators) *Authenticator {
	a := &Authenticator{ops: ops}
	a.changes, _ = ops.(store.OperatorChanges)
	return a
}

// NewTrackingAuthenticator returns an authenticator over ops that has read the operators
// already and keeps live told of their credentials' digests. When live can ask for them to be
// brought up to date before it redacts (secrets.Registry.BeforeScan), an operator added by
// another process is redacted before any call authenticates with its credential.
func NewTrackingAuthenticator(ctx context.Context, ops store.Operators, live SecretTracker) (*Authenticator, error) {
	a := NewAuthenticator(ops)
	a.live = live
	if err := a.current(ctx); err != nil {
		return nil, err
	}
	if s, ok := live.(interface{ BeforeScan(func()) }); ok {
		s.BeforeScan(a.refresh)
	}
	return a, nil
}

// refresh reads the operators again when they changed, unless a reload is under way already
// (a scan may run inside one: the store logs, and its log lines are redacted).
func (a *Authenticator) refresh() {
	if a.changes == nil {
		return
	}
	stamp := a.changes.OperatorsStamp()
	a.mu.RLock()
	fresh := a.loaded && stamp == a.stamp
	a.mu.RUnlock()
	if fresh || !a.reload.TryLock() {
		return
	}
	a.reload.Unlock()
	_ = a.current(context.Background()) // a failed read is retried by the next call
}

// current reads the operators again when the store says they changed since the last read.
func (a *Authenticator) current(ctx context.Context) error {
	var stamp uint64
	if a.changes != nil {
		stamp = a.changes.OperatorsStamp()
		a.mu.RLock()
		fresh := a.loaded && stamp == a.stamp
		a.mu.RUnlock()
		if fresh {
			return nil
		}
	}
	a.reload.Lock()
	defer a.reload.Unlock()
	a.mu.RLock()
	fresh := a.changes != nil && a.loaded && stamp == a.stamp // another call reloaded meanwhile
	a.mu.RUnlock()
	if fresh {
		return nil
	}
	// Stamped before the read: a change committed during it changes the stamp again.
	ops, err := a.ops.ListOperators(ctx)
	if err != nil {
		return err
	}
	index := make(map[[sha256.Size]byte]store.Operator, len(ops))
	for _, op := range ops {
		index[op.Digest] = op
	}
	a.mu.Lock()
	old := a.index
	a.index, a.stamp, a.loaded = index, stamp, true
	a.mu.Unlock()
	if a.live != nil {
		for d := range index {
			if _, ok := old[d]; !ok {
				a.live.AddDigest(d)
			}
		}
	}
	for d := range old {
		if _, ok := index[d]; !ok {
			if a.live != nil {
				a.live.RemoveDigest(d)
			}
			a.revoked(d)
		}
	}
	return nil
}

// OnRevoked calls f with the digest of each operator credential that stops being valid (its
// operator removed, by this process or another) as soon as the authenticator reads the change:
// at a call, at a redaction scan, or at a tick of Watch. It returns the function that stops
// the calls. f runs while the operators are being read again, so it must not call the
// authenticator.
func (a *Authenticator) OnRevoked(f func(digest [sha256.Size]byte)) (stop func()) {
	a.subsMu.Lock()
	defer a.subsMu.Unlock()
	if a.subs == nil {
		a.subs = make(map[uint64]func([sha256.Size]byte))
	}
	a.subsSeq++
	id := a.subsSeq
	a.subs[id] = f
	return func() {
		a.subsMu.Lock()
		defer a.subsMu.Unlock()
		delete(a.subs, id)
	}
}

// revoked tells OnRevoked's subscribers that the credential with digest d is no longer valid.
func (a *Authenticator) revoked(d [sha256.Size]byte) {
	a.subsMu.Lock()
	subs := make([]func([sha256.Size]byte), 0, len(a.subs))
	for _, f := range a.subs {
		subs = append(subs, f)
	}
	a.subsMu.Unlock()
	for _, f := range subs {
		f(d)
	}
}

// Watch looks for changed operators every `every` until ctx ends, so that a removed operator's
// credential stops being valid, and OnRevoked hears of it, even while nobody calls. A look
// costs one load of the store's stamp from shared memory; a store without a stamp is read.
func (a *Authenticator) Watch(ctx context.Context, c clock.Clock, every time.Duration) {
	t, tick := c.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
			_ = a.current(ctx) // a failed read is tried again at the next tick or call
		}
	}
}

// Authenticate returns the operator whose credential is token; ok is false for an unknown
// token. The index is keyed by the token's digest, so a lookup's timing tells nothing about
// the token; the final equality check is constant-time all the same.
func (a *Authenticator) Authenticate(ctx context.Context, token string) (op store.Operator, ok bool, err error) {
	if token == "" || len(token) > 4096 {
		return store.Operator{}, false, nil
	}
	d := operators.Digest(token)
	if err := a.current(ctx); err != nil {
		return store.Operator{}, false, err
	}
	a.mu.RLock()
	op, found := a.index[d]
	a.mu.RUnlock()
	if !found || subtle.ConstantTimeCompare(op.Digest[:], d[:]) != 1 {
		return store.Operator{}, false, nil
	}
	return op, true, nil
}

// Known reports whether token is an operator credential. The REST edge uses it to refuse
// requests before reading their bodies.
func (a *Authenticator) Known(ctx context.Context, token string) bool {
	_, ok, err := a.Authenticate(ctx, token)
	return ok && err == nil
}

type operatorKey struct{}

// FromContext returns the operator an authenticated call was made by.
func FromContext(ctx context.Context) (store.Operator, bool) {
	op, ok := ctx.Value(operatorKey{}).(store.Operator)
	return op, ok
}

// authenticate checks the bearer credential of an OperatorService call and returns ctx with
// its operator. Calls to other services pass untouched (roleauth authorises them).
func (a *Authenticator) authenticate(ctx context.Context, fullMethod string) (context.Context, error) {
	if !strings.HasPrefix(fullMethod, methodPrefix) {
		return ctx, nil
	}
	token, ok := bearer.FromIncomingContext(ctx)
	if !ok {
		return nil, errUnauthenticated
	}
	op, ok, err := a.Authenticate(ctx, token)
	switch {
	case err != nil:
		return nil, fault.New(fault.Unavailable, "operators cannot be read right now")
	case !ok:
		return nil, errUnauthenticated
	}
	return context.WithValue(ctx, operatorKey{}, op), nil
}

// UnaryInterceptor authenticates unary OperatorService calls.
func (a *Authenticator) UnaryInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		ctx, err := a.authenticate(ctx, info.FullMethod)
		if err != nil {
			return nil, err
		}
		return h(ctx, req)
	}
}

// StreamInterceptor authenticates streaming OperatorService calls.
func (a *Authenticator) StreamInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		ctx, err := a.authenticate(ss.Context(), info.FullMethod)
		if err != nil {
			return err
		}
		return h(srv, &wrappedStream{ServerStream: ss, ctx: ctx})
	}
}

type wrappedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (w *wrappedStream) Context() context.Context { return w.ctx }
