package connlimit_test

import (
	"bufio"
	"context"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/turncli/turncli/internal/connlimit"
)

// listen opens a loopback listener counted by lim.
func listen(t *testing.T, lim *connlimit.Limiter, refuse connlimit.Refusal) net.Listener {
	t.Helper()
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := lim.Wrap(raw, refuse)
	t.Cleanup(func() { l.Close() })
	return l
}

// serveHTTP serves a handler answering "ok" on l.
func serveHTTP(t *testing.T, l net.Listener) {
	t.Helper()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
}

// get sends one request on a new connection and returns the status line and body.
func get(t *testing.T, addr string) (conn net.Conn, status, body string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	return c, resp.Status + " retry-after=" + resp.Header.Get("Retry-After"), string(b)
}

func TestHTTPConnectionsPastThePerAddressLimitAreRefusedWith503(t *testing.T) {
	const perAddress = 3
	lim := connlimit.New(connlimit.Config{PerAddress: perAddress, Total: 100}, nil)
	l := listen(t, lim, connlimit.HTTP1)
	serveHTTP(t, l)

	var held []net.Conn
	for i := range perAddress { // the limit itself passes
		c, status, body := get(t, l.Addr().String())
		if body != "ok" {
			t.Fatalf("connection %d: %s %q, want ok", i+1, status, body)
		}
		held = append(held, c)
	}
	_, status, body := get(t, l.Addr().String()) // one over is refused
	if status != "503 Service Unavailable retry-after=1" || body != "too many connections from this address\n" {
		t.Fatalf("connection over the limit: %s %q", status, body)
	}
	me := "127.0.0.1 uid " + strconv.Itoa(os.Getuid())
	if total, by := lim.Open(); total != perAddress || by[me] != perAddress || len(by) != 1 {
		t.Fatalf("open %d %v, want %d from %q", total, by, perAddress, me)
	}

	held[0].Close() // a closed connection frees its place
	waitOpen(t, lim, perAddress-1)
	if _, status, body := get(t, l.Addr().String()); body != "ok" {
		t.Fatalf("after one closed: %s %q, want ok", status, body)
	}
}

func TestTheTotalLimitCountsEveryListener(t *testing.T) {
	lim := connlimit.New(connlimit.Config{PerAddress: 2, Total: 2}, nil)
	a, b := listen(t, lim, connlimit.HTTP1), listen(t, lim, connlimit.HTTP1)
	serveHTTP(t, a)
	serveHTTP(t, b)
	get(t, a.Addr().String())
	get(t, b.Addr().String())
	if _, status, body := get(t, b.Addr().String()); !strings.HasPrefix(status, "503") {
		t.Fatalf("third connection over two listeners: %s %q, want 503", status, body)
	}
}

func TestGRPCConnectionsPastTheLimitAreToldWhy(t *testing.T) {
	lim := connlimit.New(connlimit.Config{PerAddress: 1, Total: 10}, nil)
	l := listen(t, lim, connlimit.HTTP2)
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go srv.Serve(l)
	t.Cleanup(srv.Stop)

	check := func() error {
		conn, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err = healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
		return err
	}
	if err := check(); err != nil { // the limit itself passes, and stays open
		t.Fatalf("first connection: %v", err)
	}
	err := check()
	if err == nil || !strings.Contains(err.Error(), "too many connections from this address") {
		t.Fatalf("second connection: %v, want the refusal's reason", err)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  connlimit.Config
		ok   bool
	}{
		{"Defaults", connlimit.DefaultConfig(), true},
		{"PerAddressEqualToTotal", connlimit.Config{PerAddress: 5, Total: 5}, true},
		{"PerAddressOverTotal", connlimit.Config{PerAddress: 6, Total: 5}, false},
		{"ZeroPerAddress", connlimit.Config{PerAddress: 0, Total: 5}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.cfg.Validate(); (err == nil) != tc.ok {
				t.Fatalf("Validate() = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// waitOpen waits until the limiter counts n open connections (a close reaches the server's
// side a moment after the client's).
func waitOpen(t *testing.T, lim *connlimit.Limiter, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if total, _ := lim.Open(); total == n {
			return
		}
		if time.Now().After(deadline) {
			total, _ := lim.Open()
			t.Fatalf("open connections %d, want %d", total, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// dialAs connects to addr from a socket owned by uid, as a shell of an agent with that user
// would (a socket belongs to its creator's file-system uid, which is per thread).
func dialAs(t *testing.T, uid int, addr string) net.Conn {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	prev, _ := unix.SetfsuidRetUid(uid)
	defer unix.SetfsuidRetUid(prev)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestOnLoopbackEachUserHasAQuotaOfItsOwn(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to create sockets as other users")
	}
	const agent, other = 2099901, 2099902
	lim := connlimit.New(connlimit.Config{PerAddress: 2, Total: 100}, nil)
	l := listen(t, lim, connlimit.HTTP1)
	serveHTTP(t, l)
	// One agent's shells take their whole quota, and are refused past it.
	for range 2 {
		dialAs(t, agent, l.Addr().String())
	}
	waitOpen(t, lim, 2)
	refused := dialAs(t, agent, l.Addr().String())
	if _, err := io.WriteString(refused, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = refused.SetReadDeadline(time.Now().Add(10 * time.Second))
	if reply, _ := io.ReadAll(refused); !strings.Contains(string(reply), "503 Service Unavailable") {
		t.Fatalf("third connection of one user: %q, want a 503", reply)
	}
	// Another agent, and this process's own user (the runtime's, say), still connect.
	for _, uid := range []int{other, os.Getuid()} {
		c := dialAs(t, uid, l.Addr().String())
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("user %d while another's quota is full: %v %v", uid, resp, err)
		}
	}
	_, by := lim.Open()
	want := map[string]int{"127.0.0.1 uid 2099901": 2, "127.0.0.1 uid 2099902": 1, "127.0.0.1 uid " + strconv.Itoa(os.Getuid()): 1}
	if !maps.Equal(by, want) {
		t.Fatalf("open by peer %v, want %v", by, want)
	}
}
