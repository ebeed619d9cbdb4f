package leaderconn

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
)

// serve runs a gRPC server on loopback answering every call with answer(), and returns its
// address.
func serve(t *testing.T, answer func() error) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
		if err := answer(); err != nil {
			return err
		}
		var in emptypb.Empty
		if err := stream.RecvMsg(&in); err != nil {
			return err
		}
		return stream.SendMsg(&emptypb.Empty{})
	}))
	go s.Serve(l)
	t.Cleanup(s.Stop)
	return l.Addr().String()
}

func call(ctx context.Context, c *Conn) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	err := c.Invoke(ctx, "/x.Primary/Hello", &emptypb.Empty{}, &emptypb.Empty{})
	return err == nil, err
}

func newConn(t *testing.T, list string) *Conn {
	t.Helper()
	c, err := New(context.Background(), list, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestRound(t *testing.T) {
	ctx := context.Background()
	leader := serve(t, func() error { return nil })
	standby := serve(t, func() error { return status.Error(codes.Unavailable, StandbyMessage(leader)) })
	down := func() string { // an address nobody listens on
		l, _ := net.Listen("tcp", "127.0.0.1:0")
		defer l.Close()
		return l.Addr().String()
	}()

	t.Run("AStandbyNamingTheLeaderIsFollowedToIt", func(t *testing.T) {
		c := newConn(t, strings.Join([]string{standby, down, leader}, ", "))
		var skipped []string
		ok, err := c.Round(ctx, func(ctx context.Context) (bool, error) { return call(ctx, c) }, nil, func(failed string, _ error) { skipped = append(skipped, failed) })
		if !ok || err != nil || c.Addr() != leader {
			t.Fatalf("Round: %v %v, following %s; want the leader %s", ok, err, c.Addr(), leader)
		}
		if len(skipped) != 1 || skipped[0] != standby {
			t.Errorf("tried before the leader: %v, want only the standby (it named the leader)", skipped)
		}
	})

	t.Run("APrimaryThatIsDownIsSkipped", func(t *testing.T) {
		c := newConn(t, down+","+leader)
		if ok, err := c.Round(ctx, func(ctx context.Context) (bool, error) { return call(ctx, c) }, nil, nil); !ok || err != nil || c.Addr() != leader {
			t.Fatalf("Round: %v %v, following %s", ok, err, c.Addr())
		}
	})

	t.Run("ARoundWithoutALeaderReturnsTheLastFailure", func(t *testing.T) {
		c := newConn(t, standby+","+down)
		calls := 0
		ok, err := c.Round(ctx, func(ctx context.Context) (bool, error) { calls++; return call(ctx, c) }, nil, nil)
		if ok || err == nil || calls != 2 {
			t.Fatalf("Round: %v %v after %d attempts; want a failure after one attempt on each", ok, err, calls)
		}
	})

	t.Run("AFinalErrorEndsTheRound", func(t *testing.T) {
		c := newConn(t, standby+","+leader)
		refused := errors.New("refused")
		calls := 0
		_, err := c.Round(ctx, func(context.Context) (bool, error) { calls++; return false, refused },
			func(err error) bool { return errors.Is(err, refused) }, nil)
		if !errors.Is(err, refused) || calls != 1 {
			t.Fatalf("Round: %v after %d attempts; want refused after one", err, calls)
		}
	})
}

func TestRoundRedialsAPrimaryThatCameBack(t *testing.T) {
	ctx := context.Background()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	// gRPC's own backoff is set far beyond the test, so only Round can make it dial again.
	c, err := New(ctx, addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.Config{BaseDelay: time.Hour, Multiplier: 1, MaxDelay: time.Hour}}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	attempt := func(ctx context.Context) (bool, error) { return call(ctx, c) }
	if ok, _ := c.Round(ctx, attempt, nil, nil); ok {
		t.Fatal("an attempt on a primary that is down succeeded")
	}

	if l, err = net.Listen("tcp", addr); err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	s := grpc.NewServer(grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
		return stream.SendMsg(&emptypb.Empty{})
	}))
	go s.Serve(l)
	t.Cleanup(s.Stop)
	var last error
	for range 100 {
		ok, err := c.Round(ctx, attempt, nil, nil)
		if ok {
			return
		}
		last = err
		time.Sleep(20 * time.Millisecond) // the caller's backoff
	}
	t.Fatalf("the primary is back but every attempt still fails: %v", last)
}

func TestNew(t *testing.T) {
	resolve = func(_ context.Context, host string) ([]string, error) {
		if host == "primaries.example" {
			return []string{"10.0.0.1", "10.0.0.2"}, nil
		}
		return []string{"10.0.0.9"}, nil
	}
	t.Cleanup(func() { resolve = net.DefaultResolver.LookupHost })

	for _, tc := range []struct {
		name, list string
		want       []string
	}{
		{"ANameResolvingToSeveralAddressesCountsAsEach", "primaries.example:7420", []string{"10.0.0.1:7420", "10.0.0.2:7420"}},
		{"ANameResolvingToOneAddressIsDialledByName", "primary.example:7420", []string{"primary.example:7420"}},
		{"AListKeepsItsOrderAndDropsBlanks", " 127.0.0.1:1, ,[::1]:2 ", []string{"127.0.0.1:1", "[::1]:2"}},
		{"AResolverTargetIsDialledAsItIs", "passthrough:///primary", []string{"passthrough:///primary"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newConn(t, tc.list)
			if strings.Join(c.addrs, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("addresses %v, want %v", c.addrs, tc.want)
			}
		})
	}
	t.Run("AnEmptyListIsRefused", func(t *testing.T) {
		if _, err := New(context.Background(), " , "); err == nil {
			t.Fatal("New accepted no address")
		}
	})
}
