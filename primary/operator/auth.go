package operator

import (
	"context"
	"crypto/subtle"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/primary/store"
)

var methodPrefix = "/" + operatorv1.OperatorService_ServiceDesc.ServiceName + "/"

var errUnauthenticated = status.Error(codes.Unauthenticated, "missing or invalid operator credential")

// Authenticator finds the operator a credential belongs to. It reads the store on every call,
// so an operator added or removed by `mindroom-primary operators` takes effect at once.
type Authenticator struct {
	ops store.Operators
}

// NewAuthenticator returns an authenticator over ops.
func NewAuthenticator(ops store.Operators) *Authenticator { return &Authenticator{ops: ops} }

// Authenticate returns the operator whose credential is token. The token's digest is compared
// with every operator's in constant time; ok is false for an unknown token.
func (a *Authenticator) Authenticate(ctx context.Context, token string) (op store.Operator, ok bool, err error) {
	if token == "" || len(token) > 4096 {
		return store.Operator{}, false, nil
	}
	ops, err := a.ops.ListOperators(ctx)
	if err != nil {
		return store.Operator{}, false, err
	}
	d := Digest(token)
	found := -1
	for i := range ops {
		if subtle.ConstantTimeCompare(ops[i].Digest[:], d[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return store.Operator{}, false, nil
	}
	return ops[found], true, nil
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
	md, _ := metadata.FromIncomingContext(ctx)
	values := md.Get("authorization")
	if len(values) != 1 {
		return nil, errUnauthenticated
	}
	token, ok := strings.CutPrefix(values[0], "Bearer ")
	if !ok {
		return nil, errUnauthenticated
	}
	op, ok, err := a.Authenticate(ctx, token)
	switch {
	case err != nil:
		return nil, status.Error(codes.Unavailable, "operators cannot be read right now")
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
