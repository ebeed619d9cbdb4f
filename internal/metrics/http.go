package metrics

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/prometheus/client_golang/prometheus"
)

// Unmatched is the route label of a request no route took (a wrong path, or a request refused
// before routing, such as one without a credential).
const Unmatched = "unmatched"

// HTTP counts the requests of HTTP servers by server, route pattern, method and status code,
// with their latency.
type HTTP struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec

	mu       sync.RWMutex
	children map[httpKey]httpSeries
}

type httpKey struct {
	server, route, method string
	code                  int
}

type httpSeries struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

// NewHTTP registers the HTTP series on reg.
func NewHTTP(reg prometheus.Registerer) *HTTP {
	h := &HTTP{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "http", Name: "requests_total",
			Help: "HTTP requests answered, by server, route pattern, method and status code.",
		}, []string{"server", "route", "method", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "http", Name: "request_duration_seconds",
			Help:    "Latency of HTTP requests until the handler returned, by server, route pattern and method.",
			Buckets: LatencyBuckets,
		}, []string{"server", "route", "method"}),
		children: make(map[httpKey]httpSeries),
	}
	reg.MustRegister(h.requests, h.latency)
	return h
}

// series returns the children of a label set, resolving them once.
func (h *HTTP) series(k httpKey) httpSeries {
	h.mu.RLock()
	s, ok := h.children[k]
	h.mu.RUnlock()
	if ok {
		return s
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if s, ok = h.children[k]; !ok {
		s = httpSeries{
			requests: h.requests.WithLabelValues(k.server, k.route, k.method, statusText(k.code)),
			latency:  h.latency.WithLabelValues(k.server, k.route, k.method),
		}
		h.children[k] = s
	}
	return s
}

// Static instruments next, the handler of server, whose routes route names from the request
// before next runs: a pattern, or "" for none (Unmatched).
func (h *HTTP) Static(server string, route func(*http.Request) string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := recorder{ResponseWriter: w}
		start, rt := time.Now(), route(r)
		if rt == "" {
			rt = Unmatched
		}
		next.ServeHTTP(&rw, r)
		h.observe(server, rt, r.Method, rw.code(), start)
	})
}

// Routed instruments next, the handler of server, whose route is recorded while it serves
// (GatewayRoutes records a grpc-gateway's); a request no route took is Unmatched.
func (h *HTTP) Routed(server string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &routedRecorder{recorder: recorder{ResponseWriter: w}}
		start := time.Now()
		next.ServeHTTP(rw, r.WithContext(context.WithValue(r.Context(), routeKey{}, rw)))
		route := Unmatched
		if p := rw.route.Load(); p != nil {
			route = *p
		}
		h.observe(server, route, r.Method, rw.code(), start)
	})
}

func (h *HTTP) observe(server, route, method string, code int, start time.Time) {
	s := h.series(httpKey{server: server, route: route, method: boundedMethod(method), code: code})
	s.latency.Observe(time.Since(start).Seconds())
	s.requests.Inc()
}

type routeKey struct{}

// RecordRoute records route, a fixed path, as the route label of r for Routed: for a handler
// that serves its own path beside a grpc-gateway's routes. Outside Routed it does nothing.
func RecordRoute(r *http.Request, route string) {
	if rw, ok := r.Context().Value(routeKey{}).(*routedRecorder); ok {
		rw.route.Store(&route)
	}
}

// GatewayRoutes is a grpc-gateway middleware that records, for Routed, the path pattern of the
// route that took the request. Each route's pattern is rendered once.
func GatewayRoutes() runtime.Middleware {
	return func(next runtime.HandlerFunc) runtime.HandlerFunc {
		var pattern atomic.Pointer[string] // this route's, rendered on its first request
		return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
			if rw, ok := r.Context().Value(routeKey{}).(*routedRecorder); ok {
				p := pattern.Load()
				if p == nil {
					s := Unmatched
					if pat, ok := runtime.HTTPPattern(r.Context()); ok {
						s = pat.String()
					}
					p = &s
					pattern.Store(p)
				}
				rw.route.Store(p)
			}
			next(w, r, params)
		}
	}
}

// boundedMethod keeps the method label to the methods HTTP defines: a client may send any token.
func boundedMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return m
	}
	return "other"
}

// statusTexts are the code labels, rendered once.
var statusTexts = func() map[int]string {
	m := make(map[int]string)
	for c := 100; c < 600; c++ {
		m[c] = itoa3(c)
	}
	return m
}()

func statusText(c int) string {
	if s, ok := statusTexts[c]; ok {
		return s
	}
	return "other"
}

func itoa3(c int) string {
	return string([]byte{byte('0' + c/100), byte('0' + c/10%10), byte('0' + c%10)})
}

// recorder remembers the status a handler wrote. It passes Flush through (the gateway
// streams server-streaming calls) and Unwrap for http.ResponseController.
type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *recorder) Flush() {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *recorder) code() int {
	if r.status == 0 {
		return http.StatusOK // a handler that wrote nothing answered 200
	}
	return r.status
}

type routedRecorder struct {
	recorder
	route atomic.Pointer[string]
}
