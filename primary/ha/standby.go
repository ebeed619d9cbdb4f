package ha

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/faultgrpc"
	"github.com/turncli/turncli/internal/leaderconn"
	"github.com/turncli/turncli/internal/logging"
	imetrics "github.com/turncli/turncli/internal/metrics"
	"github.com/turncli/turncli/internal/readiness"
	"github.com/turncli/turncli/primary/leader"
	"github.com/turncli/turncli/primary/listen"
	"github.com/turncli/turncli/primary/metrics"
)

// standby serves a primary's listeners while another primary leads: every API answers
// Unavailable naming the leader when it is known (gRPC UNAVAILABLE; REST and the Agent CLI 503
// in the gateway's error shape, code 14), the gRPC health service NOT_SERVING, /healthz 200
// and /readyz 503 with the failing check "leader", and /metrics the process's own series with
// turncli_primary_leader at 0. Clients that know several primaries take
// the Unavailable as "try the next".
type standby struct {
	leaderAddr atomic.Pointer[string]
	grpc       *grpc.Server
	ready      *readiness.Checker
	servers    []*http.Server
	wg         sync.WaitGroup
	log        *slog.Logger // the HTTP servers' own errors
}

// standbyCheck is the name of the readiness check a standby fails.
const standbyCheck = "leader"

func newStandby(log *slog.Logger) *standby {
	s := &standby{log: log}
	s.grpc = grpc.NewServer(grpc.UnknownServiceHandler(func(_ any, ss grpc.ServerStream) error {
		return faultgrpc.Status(ss.Context(), nil, "", fault.New(fault.Unavailable, s.message()))
	}))
	h := health.NewServer()
	healthpb.RegisterHealthServer(s.grpc, h)
	s.ready = readiness.New(h, readiness.Check{Name: standbyCheck, Probe: func(context.Context) error {
		return errors.New(s.message())
	}})
	return s
}

// follow records the leader a campaign saw (the zero Lease: none).
func (s *standby) follow(l leader.Lease) {
	addr := l.Addr
	s.leaderAddr.Store(&addr)
}

// message is what every call to a standby is told.
func (s *standby) message() string {
	var addr string
	if p := s.leaderAddr.Load(); p != nil {
		addr = *p
	}
	return leaderconn.StandbyMessage(addr)
}

// unavailable answers every REST and Agent CLI request but the health endpoints.
func (s *standby) unavailable(w http.ResponseWriter, _ *http.Request) {
	body, _ := json.Marshal(struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Details []any  `json:"details"`
	}{int(faultgrpc.Code(fault.Unavailable)), s.message(), []any{}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write(body)
}

// serve starts serving lis; stop ends it.
func (s *standby) serve(lis listen.Listeners) {
	s.wg.Go(func() { _ = s.grpc.Serve(lis.GRPC) })
	for _, l := range []struct {
		lis             net.Listener
		health, metrics bool
	}{{lis.HTTP, true, false}, {lis.AgentCLI, false, false}, {lis.Metrics, true, true}} {
		if l.lis == nil {
			continue
		}
		mux := http.NewServeMux()
		if l.health {
			s.ready.Handle(mux)
		}
		if l.metrics {
			mux.Handle("GET /metrics", imetrics.Handler(metrics.Standby()))
		}
		mux.HandleFunc("/", s.unavailable)
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: logging.HTTPServerLog(s.log)}
		s.servers = append(s.servers, srv)
		s.wg.Go(func() { _ = srv.Serve(l.lis) })
	}
}

// stop closes every connection to the standby's servers, closes their listeners and waits
// for them to return.
func (s *standby) stop() {
	s.ready.Shutdown()
	for _, srv := range s.servers {
		_ = srv.Close()
	}
	s.grpc.Stop()
	s.wg.Wait()
}
