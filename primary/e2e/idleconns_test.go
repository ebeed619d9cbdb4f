package e2e

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
)

// TestIdleConnectionsAreClosedWhileTheAPIsStayFast opens 2,000 idle HTTP/2 connections to a
// real primary's gRPC port (each a well-behaved client that completed the handshake and
// answers pings, then sends nothing) and 200 that stop after the preface, as one agent shell
// on the same host could. Every one is closed within the idle (or handshake) timeout, while
// health checks and operator calls made meanwhile stay fast; each HTTP listener closes an
// idle keep-alive connection too.
func TestIdleConnectionsAreClosedWhileTheAPIsStayFast(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binaries")
	}
	const (
		idle      = 3 * time.Second
		handshake = 2 * time.Second
		idleConns = 2000
		halfOpen  = 200
	)
	bin := mpBuild(t)
	state := shellTempDir(t)
	prim, ep := startRestartPrimary(t, "mindroom-primary", bin, state, freeLoopbackAddr(t),
		"--metrics-listen", "127.0.0.1:0", "--idle-timeout", idle.String(), "--handshake-timeout", handshake.String(),
		"--max-conns-per-address", "3000", "--max-conns", "4000")

	opened := time.Now()
	closed := make(chan time.Duration, idleConns+halfOpen)
	var wg sync.WaitGroup
	for i := range idleConns + halfOpen {
		c, err := net.Dial("tcp", ep.GRPC)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		t.Cleanup(func() { c.Close() })
		wg.Add(1)
		go func() {
			defer wg.Done()
			idleHTTP2Client(c, i < idleConns)
			closed <- time.Since(opened)
		}()
	}
	t.Logf("%d idle and %d half-open connections opened in %s", idleConns, halfOpen, time.Since(opened).Round(time.Millisecond))

	// Meanwhile the APIs answer as usual.
	var health, calls []time.Duration
	ctx, cancel := bearerCtx(prim.admin)
	defer cancel()
	hc := healthpb.NewHealthClient(prim.conn)
	for len(health) == 0 || time.Since(opened) < idle { // at least one sample, however long the opening took
		start := time.Now()
		if _, err := hc.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
			t.Fatalf("health check during the flood: %v", err)
		}
		health = append(health, time.Since(start))
		start = time.Now()
		if _, err := prim.operator.ListWorkers(ctx, &operatorv1.ListWorkersRequest{}); err != nil {
			t.Fatalf("operator call during the flood: %v", err)
		}
		calls = append(calls, time.Since(start))
		time.Sleep(20 * time.Millisecond)
	}
	resp, err := http.Get(ep.Metrics + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz during the flood: %v %v", resp, err)
	}
	resp.Body.Close()
	slowest := func(d []time.Duration) time.Duration { return slices.Max(d) }
	t.Logf("during the flood: %d health checks, slowest %s; %d operator calls, slowest %s",
		len(health), slowest(health).Round(time.Microsecond), len(calls), slowest(calls).Round(time.Microsecond))
	if slowest(health) > time.Second || slowest(calls) > time.Second {
		t.Fatalf("an API answered slower than a second during the flood")
	}

	// gRPC spreads the idle limit by ±10% per connection.
	limit := idle + idle/10 + 2*time.Second
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("%d of %d connections still open %s after they were opened", idleConns+halfOpen-len(closed), idleConns+halfOpen, limit)
	}
	last := time.Duration(0)
	for range idleConns + halfOpen {
		last = max(last, <-closed)
	}
	t.Logf("every connection closed by the primary %s after the first was opened (idle timeout %s)", last.Round(time.Millisecond), idle)

	// The HTTP listeners close an idle keep-alive connection as well.
	for _, l := range []struct{ name, url string }{
		{"REST", ep.HTTP + "/v1/whoami"}, {"dashboard", ep.HTTP + "/ui/signin"},
		{"Agent CLI", ep.AgentCLI + "/v1/tools"}, {"metrics", ep.Metrics + "/healthz"},
	} {
		t.Run("IdleKeepAliveClosedOn"+strings.ReplaceAll(l.name, " ", ""), func(t *testing.T) {
			addr := strings.TrimPrefix(strings.TrimPrefix(l.url, "http://"), "https://")
			host, path, _ := strings.Cut(addr, "/")
			c, err := net.Dial("tcp", host)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := io.WriteString(c, "GET /"+path+" HTTP/1.1\r\nHost: "+host+"\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(c)
			resp, err := http.ReadResponse(r, nil)
			if err != nil {
				t.Fatalf("first request: %v", err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.Close {
				t.Fatalf("the server closed after one request (%s); want a keep-alive connection", resp.Status)
			}
			start := time.Now()
			_ = c.SetReadDeadline(time.Now().Add(idle + 5*time.Second))
			if _, err := r.ReadByte(); err != io.EOF {
				t.Fatalf("idle keep-alive connection: %v, want closed by the server", err)
			}
			t.Logf("%s closed an idle keep-alive connection after %s", l.name, time.Since(start).Round(time.Millisecond))
		})
	}

	// Fresh connections are served after the flood.
	conn, err := grpc.NewClient(ep.GRPC, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	hctx, hcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer hcancel()
	if _, err := healthpb.NewHealthClient(conn).Check(hctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatalf("health check after the flood: %v", err)
	}
}

// idleHTTP2Client speaks HTTP/2 on c as a client that opens no stream: with complete, the
// preface and SETTINGS, then answering the server's SETTINGS and pings; without, the preface
// alone. It returns when the server closes the connection.
func idleHTTP2Client(c net.Conn, complete bool) {
	if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
		return
	}
	if !complete {
		_, _ = io.Copy(io.Discard, c)
		return
	}
	f := http2.NewFramer(c, c)
	if err := f.WriteSettings(); err != nil {
		return
	}
	for {
		fr, err := f.ReadFrame()
		if err != nil {
			return
		}
		switch fr := fr.(type) {
		case *http2.SettingsFrame:
			if !fr.IsAck() {
				_ = f.WriteSettingsAck()
			}
		case *http2.PingFrame:
			if !fr.IsAck() {
				_ = f.WritePing(true, fr.Data)
			}
		}
	}
}
