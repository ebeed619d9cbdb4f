package primary

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/turncli/turncli/internal/pgtest"
	"github.com/turncli/turncli/internal/shellhost"
	"github.com/turncli/turncli/primary/ha"
	"github.com/turncli/turncli/primary/leader"
	"github.com/turncli/turncli/primary/listen"
)

// freeAddr is a loopback address nobody listens on, for a primary whose addresses the test must
// know before it writes endpoints.json (a standby writes none).
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

type contender struct {
	cfg  Config
	done chan struct{} // closed when Run returned err
	err  error
	stop context.CancelFunc
}

func startContender(t *testing.T, url string) *contender {
	t.Helper()
	cfg := Config{
		StateDir: t.TempDir(), Store: StoreConfig{URL: url}, Shells: shellhost.Settings{AgentBinary: os.Args[0]}, RuntimeToken: "runtime-token-for-failover",
		Listen:        listen.Config{GRPC: freeAddr(t), HTTP: freeAddr(t), AgentCLI: freeAddr(t), Metrics: freeAddr(t)},
		HA:            ha.Config{Enabled: true, LeaseTTL: 600 * time.Millisecond, LeaseRenew: 150 * time.Millisecond},
		ShutdownGrace: 2 * time.Second,
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &contender{cfg: cfg, done: make(chan struct{}), stop: cancel}
	go func() { c.err = Run(ctx, cfg); close(c.done) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			t.Error("a primary did not stop")
		}
	})
	return c
}

// awaitLeading waits for c's endpoints.json, which only a leader writes.
func (c *contender) awaitLeading(t *testing.T, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < within {
		if _, err := os.Stat(filepath.Join(c.cfg.StateDir, EndpointsFile)); err == nil {
			return time.Since(start)
		}
		select {
		case <-c.done:
			t.Fatalf("the primary stopped: %v", c.err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("the primary did not lead within %v", within)
	return 0
}

func dial(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func healthOf(t *testing.T, addr string) healthpb.HealthCheckResponse_ServingStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := healthpb.NewHealthClient(dial(t, addr)).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatalf("health of %s: %v", addr, err)
	}
	return res.GetStatus()
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

func TestActiveStandby(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := startContender(t, url)
	a.awaitLeading(t, 30*time.Second)
	b := startContender(t, url)

	t.Run("AStandbyAnswersUnavailableNamingTheLeader", func(t *testing.T) {
		var err error
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			err = dial(t, b.cfg.Listen.GRPC).Invoke(ctx, "/turncli.response.v1.ResponseService/OpenResponse", &emptypb.Empty{}, &emptypb.Empty{})
			cancel()
			if strings.Contains(status.Convert(err).Message(), "leader is") {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if status.Code(err) != codes.Unavailable || status.Convert(err).Message() != "standby; leader is "+a.cfg.Listen.GRPC {
			t.Fatalf("a call to the standby: %v; want Unavailable naming %s", err, a.cfg.Listen.GRPC)
		}
		if s := healthOf(t, b.cfg.Listen.GRPC); s != healthpb.HealthCheckResponse_NOT_SERVING {
			t.Errorf("the standby's gRPC health: %v", s)
		}
		if code, body := get(t, "http://"+b.cfg.Listen.HTTP+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, `"check":"leader"`) {
			t.Errorf("the standby's /readyz: %d %s", code, body)
		}
		if code, _ := get(t, "http://"+b.cfg.Listen.HTTP+"/healthz"); code != http.StatusOK {
			t.Errorf("the standby's /healthz: %d", code)
		}
		if code, body := get(t, "http://"+b.cfg.Listen.Metrics+"/metrics"); code != http.StatusOK ||
			!strings.Contains(body, "\nturncli_primary_leader 0\n") || !strings.Contains(body, "\ngo_goroutines ") {
			t.Errorf("the standby's /metrics: %d, want 200 with turncli_primary_leader 0 and the runtime's series:\n%s", code, body)
		}
		code, body := get(t, "http://"+b.cfg.Listen.HTTP+"/v1/responses")
		want := `{"code":14,"message":"standby; leader is ` + a.cfg.Listen.GRPC + `","details":[]}`
		if code != http.StatusServiceUnavailable || body != want {
			t.Errorf("the standby's REST API: %d %s; want 503 %s", code, body, want)
		}
	})

	t.Run("TheStandbyLeadsOnTheSameAddressesOnceTheLeaderStops", func(t *testing.T) {
		a.stop()
		if <-a.done; a.err != nil {
			t.Fatalf("the leader's clean stop: %v", a.err)
		}
		took := b.awaitLeading(t, 10*time.Second)
		t.Logf("takeover after a clean stop: %v", took)
		// endpoints.json is written just before the listeners serve: wait for them.
		s := healthOf(t, b.cfg.Listen.GRPC)
		for deadline := time.Now().Add(5 * time.Second); s != healthpb.HealthCheckResponse_SERVING && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
			s = healthOf(t, b.cfg.Listen.GRPC)
		}
		if s != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("the new leader's gRPC health: %v", s)
		}
		if code, body := get(t, "http://"+b.cfg.Listen.HTTP+"/readyz"); code != http.StatusOK {
			t.Errorf("the new leader's /readyz: %d %s", code, body)
		}
		if code, body := get(t, "http://"+b.cfg.Listen.Metrics+"/metrics"); code != http.StatusOK || !strings.Contains(body, "\nturncli_primary_leader 1\n") {
			t.Errorf("the new leader's /metrics: %d, want turncli_primary_leader 1:\n%.2000s", code, body)
		}
	})

	t.Run("ALeaderWhoseLeaseIsTakenOverStopsWithAnError", func(t *testing.T) {
		var ep Endpoints
		data, err := os.ReadFile(filepath.Join(b.cfg.StateDir, EndpointsFile))
		if err != nil || json.Unmarshal(data, &ep) != nil {
			t.Fatalf("endpoints: %v", err)
		}
		bk, err := leader.OpenPostgres(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		defer bk.Close()
		// As if b had paused past its TTL and another primary had taken over. b renews on
		// its own schedule and may take the released lease back first; then release it again.
		for attempt := 1; ; attempt++ {
			cur, err := bk.Current(context.Background())
			if err != nil || !cur.Held() {
				t.Fatalf("current lease %+v, %v", cur, err)
			}
			if err := bk.Release(context.Background(), cur); err != nil {
				t.Fatal(err)
			}
			_, ok, err := bk.Acquire(context.Background(), "intruder", "127.0.0.1:1", time.Minute)
			if err != nil || (!ok && attempt == 10) {
				t.Fatalf("take over: %v %v after %d attempts", ok, err, attempt)
			}
			if ok {
				break
			}
		}
		select {
		case <-b.done:
			if !errors.Is(b.err, leader.ErrLost) {
				t.Fatalf("Run after its lease was taken: %v, want ErrLost", b.err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the old leader kept serving")
		}
	})
}
