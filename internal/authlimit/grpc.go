package authlimit

import (
	"context"
	"net"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/turncli/turncli/internal/fault"
)

// UnaryServerInterceptor wraps auth, an interceptor that authenticates calls: a call auth
// refuses as Unauthenticated, before any handler runs, counts against the peer's address, and
// past the limit is answered LimitExceeded with a retry delay (google.rpc.RetryInfo) instead.
// What auth lets through, and every error of the handlers behind it, passes untouched.
//
// Only peers with an IP address are counted. The others are in-process connections (the REST
// gateway's and the dashboard's), whose edges count their own clients' refusals by address.
func (l *Limiter) UnaryServerInterceptor(auth grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		reached := false
		resp, err := auth(ctx, req, info, func(ctx context.Context, req any) (any, error) {
			reached = true
			return h(ctx, req)
		})
		if err != nil && !reached {
			return nil, l.refused(ctx, err)
		}
		return resp, err
	}
}

// StreamServerInterceptor is UnaryServerInterceptor for streaming calls.
func (l *Limiter) StreamServerInterceptor(auth grpc.StreamServerInterceptor) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		reached := false
		err := auth(srv, ss, info, func(srv any, ss grpc.ServerStream) error {
			reached = true
			return h(srv, ss)
		})
		if err != nil && !reached {
			return l.refused(ss.Context(), err)
		}
		return err
	}
}

// refused counts err against the call's peer when it refuses a credential, and returns what
// the caller is answered.
func (l *Limiter) refused(ctx context.Context, err error) error {
	if !fault.Is(err, fault.Unauthenticated) {
		return err
	}
	p, ok := peer.FromContext(ctx)
	if !ok {
		return err
	}
	tcp, ok := p.Addr.(*net.TCPAddr)
	if !ok {
		return err
	}
	retry, limited := l.Fail(tcp.AddrPort().Addr())
	if !limited {
		return err
	}
	return fault.WithDetails(fault.LimitExceeded, Message(retry), &errdetails.RetryInfo{RetryDelay: durationpb.New(retry)})
}
