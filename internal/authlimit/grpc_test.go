package authlimit_test

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/turncli/turncli/internal/authlimit"
	"github.com/turncli/turncli/internal/bearer"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/faultgrpc"
)

// tokenAuth accepts the bearer credentials "good" and "handler-refuses"; a handler behind it
// refuses the latter itself.
func tokenAuth(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if token, _ := bearer.FromIncomingContext(ctx); token != "good" && token != "handler-refuses" {
		return nil, fault.New(fault.Unauthenticated, "missing or invalid credential")
	}
	return h(ctx, req)
}

func tokenAuthStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if token, _ := bearer.FromIncomingContext(ss.Context()); token != "good" {
		return fault.New(fault.Unauthenticated, "missing or invalid credential")
	}
	return h(srv, ss)
}

func handlerRefuses(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if token, _ := bearer.FromIncomingContext(ctx); token == "handler-refuses" {
		return nil, fault.New(fault.Unauthenticated, "the handler refuses")
	}
	return h(ctx, req)
}

// serve starts a gRPC server with the limiter around tokenAuth on lis, and returns a health
// client dialled through dial.
func serve(t *testing.T, l *authlimit.Limiter, lis net.Listener, dial func(context.Context, string) (net.Conn, error)) healthpb.HealthClient {
	t.Helper()
	s := grpc.NewServer(grpc.ChainUnaryInterceptor(faultgrpc.UnaryServerInterceptor(nil), l.UnaryServerInterceptor(tokenAuth), handlerRefuses),
		grpc.ChainStreamInterceptor(faultgrpc.StreamServerInterceptor(nil), l.StreamServerInterceptor(tokenAuthStream)))
	healthpb.RegisterHealthServer(s, health.NewServer())
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient("passthrough:///limited", grpc.WithContextDialer(dial), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return healthpb.NewHealthClient(conn)
}

func check(c healthpb.HealthClient, token string) error {
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token)
	_, err := c.Check(ctx, &healthpb.HealthCheckRequest{})
	return err
}

func TestGRPC(t *testing.T) {
	l, _, _ := newLimiter(t, 0)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := serve(t, l, lis, func(ctx context.Context, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "tcp", lis.Addr().String())
	})

	t.Run("TheBurstThRefusalIsUnauthenticatedTheNextResourceExhausted", func(t *testing.T) {
		for i := 1; i <= burst; i++ {
			if code := status.Code(check(c, "wrong")); code != codes.Unauthenticated {
				t.Fatalf("refusal %d: %v, want Unauthenticated", i, code)
			}
		}
		st := status.Convert(check(c, "wrong"))
		if st.Code() != codes.ResourceExhausted {
			t.Fatalf("refusal %d: %v, want ResourceExhausted", burst+1, st.Code())
		}
		var delay time.Duration
		for _, d := range st.Details() {
			if ri, ok := d.(*errdetails.RetryInfo); ok {
				delay = ri.GetRetryDelay().AsDuration()
			}
		}
		if delay != every {
			t.Fatalf("retry delay %v, want %v (details %v)", delay, every, st.Details())
		}
	})
	t.Run("AStreamsRefusalIsLimitedToo", func(t *testing.T) {
		ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer wrong")
		w, err := c.Watch(ctx, &healthpb.HealthCheckRequest{})
		if err == nil {
			_, err = w.Recv()
		}
		if code := status.Code(err); code != codes.ResourceExhausted {
			t.Fatalf("a refused watch from a limited address: %v, want ResourceExhausted", code)
		}
	})
	t.Run("AValidCredentialFromTheLimitedAddressIsServed", func(t *testing.T) {
		if err := check(c, "good"); err != nil {
			t.Fatalf("valid credential from a limited address: %v", err)
		}
	})
	t.Run("AHandlersOwnRefusalPassesUntouched", func(t *testing.T) {
		if code := status.Code(check(c, "handler-refuses")); code != codes.Unauthenticated {
			t.Fatalf("the handler's refusal became %v", code)
		}
	})
	t.Run("AnInProcessPeerIsNeverLimited", func(t *testing.T) {
		l, _, _ := newLimiter(t, 0)
		pipe := bufconn.Listen(1 << 20)
		c := serve(t, l, pipe, func(ctx context.Context, _ string) (net.Conn, error) { return pipe.DialContext(ctx) })
		for i := range burst + 5 {
			if code := status.Code(check(c, "wrong")); code != codes.Unauthenticated {
				t.Fatalf("refusal %d over an in-process connection: %v, want Unauthenticated", i+1, code)
			}
		}
	})
}
