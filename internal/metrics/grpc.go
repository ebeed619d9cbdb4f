package metrics

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// GRPC counts the calls of one side of gRPC (a server or a client) by service, method and
// status code, with their latency. A stream's latency is its whole life.
type GRPC struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec

	mu      sync.RWMutex
	methods map[string]*methodSeries // by full method name
}

// methodSeries are one method's resolved label children.
type methodSeries struct {
	service, method string
	latency         prometheus.Observer
	mu              sync.RWMutex
	codes           [codes.Unauthenticated + 1]prometheus.Counter // resolved on first use
	other           prometheus.Counter                            // a code outside the known ones
	parent          *GRPC
}

// NewGRPCServer registers the series of a gRPC server on reg.
func NewGRPCServer(reg prometheus.Registerer) *GRPC { return newGRPC(reg, "server") }

// NewGRPCClient registers the series of a gRPC client on reg.
func NewGRPCClient(reg prometheus.Registerer) *GRPC { return newGRPC(reg, "client") }

func newGRPC(reg prometheus.Registerer, side string) *GRPC {
	g := &GRPC{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "grpc_" + side, Name: "requests_total",
			Help: "gRPC calls finished by the " + side + ", by service, method and status code.",
		}, []string{"service", "method", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "grpc_" + side, Name: "request_duration_seconds",
			Help:    "Latency of gRPC calls seen by the " + side + " (a stream's whole life), by service and method.",
			Buckets: LatencyBuckets,
		}, []string{"service", "method"}),
		methods: make(map[string]*methodSeries),
	}
	reg.MustRegister(g.requests, g.latency)
	return g
}

// Register resolves the series of every method s serves, so each is exported (at zero) before
// its first call. Call it after the services are registered.
func (g *GRPC) Register(s *grpc.Server) {
	for svc, info := range s.GetServiceInfo() {
		for _, m := range info.Methods {
			g.series("/" + svc + "/" + m.Name).counter(codes.OK)
		}
	}
}

// series returns the children of a full method name ("/pkg.Service/Method"). The names are
// those of registered or generated methods: a server runs no interceptor for a method it does
// not serve, and clients call only generated ones, so the label values stay bounded.
func (g *GRPC) series(fullMethod string) *methodSeries {
	g.mu.RLock()
	m := g.methods[fullMethod]
	g.mu.RUnlock()
	if m != nil {
		return m
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if m = g.methods[fullMethod]; m == nil {
		service, method := splitMethod(fullMethod)
		m = &methodSeries{service: service, method: method, latency: g.latency.WithLabelValues(service, method), parent: g}
		g.methods[fullMethod] = m
	}
	return m
}

func splitMethod(full string) (service, method string) {
	full = strings.TrimPrefix(full, "/")
	if i := strings.LastIndexByte(full, '/'); i >= 0 {
		return full[:i], full[i+1:]
	}
	return "unknown", full
}

// counter returns the counter of code, resolving it once.
func (m *methodSeries) counter(c codes.Code) prometheus.Counter {
	m.mu.RLock()
	var ctr prometheus.Counter
	if int(c) < len(m.codes) {
		ctr = m.codes[c]
	} else {
		ctr = m.other
	}
	m.mu.RUnlock()
	if ctr != nil {
		return ctr
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	label := c.String()
	if int(c) >= len(m.codes) {
		label = "Unknown" // gRPC itself reports a code it does not know as Unknown
		if m.other == nil {
			m.other = m.parent.requests.WithLabelValues(m.service, m.method, label)
		}
		return m.other
	}
	if m.codes[c] == nil {
		m.codes[c] = m.parent.requests.WithLabelValues(m.service, m.method, label)
	}
	return m.codes[c]
}

func (m *methodSeries) done(start time.Time, err error) {
	m.latency.Observe(time.Since(start).Seconds())
	m.counter(status.Code(err)).Inc()
}

// UnaryServerInterceptor counts and times each unary call. Put it outermost but for the fault
// mapping, so it sees the status the caller gets.
func (g *GRPC) UnaryServerInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		m, start := g.series(info.FullMethod), time.Now()
		resp, err := h(ctx, req)
		m.done(start, err)
		return resp, err
	}
}

// StreamServerInterceptor counts and times each stream.
func (g *GRPC) StreamServerInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		m, start := g.series(info.FullMethod), time.Now()
		err := h(srv, ss)
		m.done(start, err)
		return err
	}
}

// UnaryClientInterceptor counts and times each unary call a client makes.
func (g *GRPC) UnaryClientInterceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		m, start := g.series(method), time.Now()
		err := invoker(ctx, method, req, reply, cc, opts...)
		m.done(start, err)
		return err
	}
}

// StreamClientInterceptor counts each stream a client opens when it ends: when it fails to
// open, or when a receive returns an error (io.EOF counts as OK).
func (g *GRPC) StreamClientInterceptor() grpc.StreamClientInterceptor {
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		m, start := g.series(method), time.Now()
		cs, err := streamer(ctx, desc, cc, method, opts...)
		if err != nil {
			m.done(start, err)
			return nil, err
		}
		return &countedStream{ClientStream: cs, m: m, start: start}, nil
	}
}

type countedStream struct {
	grpc.ClientStream
	m     *methodSeries
	start time.Time
	once  sync.Once
}

func (s *countedStream) RecvMsg(msg any) error {
	err := s.ClientStream.RecvMsg(msg)
	if err != nil {
		s.once.Do(func() {
			if errors.Is(err, io.EOF) {
				s.m.done(s.start, nil)
				return
			}
			s.m.done(s.start, err)
		})
	}
	return err
}
