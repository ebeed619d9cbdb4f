// Package readiness answers whether a process is alive and whether it is ready for work, over
// HTTP (/healthz and /readyz) and through the standard gRPC health service, so that both
// always say the same thing. Readiness is a list of named checks a process assembles (the
// primary's store and listeners; a worker's connection to its primary; later others, such as
// a standby's "leader"); shutting down is one more check that every process has.
//
// It owns the verdict and its two encodings, not the checks: each check is a function of the
// component it probes.
package readiness

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// Check is one named condition of readiness. Probe returns nil while the condition holds; it
// is called on every /readyz and every refresh, under a deadline of ProbeTimeout.
type Check struct {
	Name  string
	Probe func(ctx context.Context) error
}

// ProbeTimeout bounds one probe: a check that cannot answer in this time is failing.
const ProbeTimeout = 2 * time.Second

// ShuttingDown is the name of the check that fails once Shutdown is called.
const ShuttingDown = "shutdown"

// errShuttingDown is the shutdown check's failure.
var errShuttingDown = errors.New("the process is shutting down")

// Failure is a failing check and why.
type Failure struct {
	Check string `json:"check"`
	Error string `json:"error"`
}

// Checker holds a process's checks and, when given one, keeps its gRPC health server's
// overall status ("") in step with them.
type Checker struct {
	checks   []Check
	notes    map[string]string // facts /readyz reports beside the verdict; set before serving
	grpc     *health.Server    // nil: no gRPC health service
	stopping atomic.Bool
	mu       sync.Mutex // orders updates of the gRPC status
}

// New returns a Checker of checks. grpcHealth, when not nil, is set NOT_SERVING at once and
// then follows the verdict on every Refresh and /readyz, and for good on Shutdown.
func New(grpcHealth *health.Server, checks ...Check) *Checker {
	c := &Checker{checks: checks, grpc: grpcHealth}
	if grpcHealth != nil {
		grpcHealth.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	}
	return c
}

// Failing runs every check and returns those that fail, in the order of the checks.
func (c *Checker) Failing(ctx context.Context) []Failure {
	var failing []Failure
	if c.stopping.Load() {
		failing = append(failing, Failure{Check: ShuttingDown, Error: errShuttingDown.Error()})
	}
	for _, ch := range c.checks {
		pctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
		err := ch.Probe(pctx)
		cancel()
		if err != nil {
			failing = append(failing, Failure{Check: ch.Name, Error: err.Error()})
		}
	}
	c.publish(len(failing) == 0)
	return failing
}

// Refresh runs the checks, which updates the gRPC status.
func (c *Checker) Refresh(ctx context.Context) { c.Failing(ctx) }

// Run refreshes the verdict every interval until ctx ends, so the gRPC status follows a check
// that starts failing even when nobody asks /readyz.
func (c *Checker) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.Refresh(ctx)
		}
	}
}

// Shutdown makes the process not ready for good: /readyz answers 503 naming "shutdown" and
// the gRPC health service NOT_SERVING, to every service, from now on.
func (c *Checker) Shutdown() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopping.Store(true)
	if c.grpc != nil {
		c.grpc.Shutdown()
	}
}

func (c *Checker) publish(ready bool) {
	if c.grpc == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopping.Load() {
		return // Shutdown set NOT_SERVING for good
	}
	s := healthpb.HealthCheckResponse_NOT_SERVING
	if ready {
		s = healthpb.HealthCheckResponse_SERVING
	}
	c.grpc.SetServingStatus("", s)
}

// Paths of the two HTTP endpoints.
const (
	HealthzPath = "/healthz"
	ReadyzPath  = "/readyz"
)

// verdict is the JSON body of /readyz.
type verdict struct {
	Status  string            `json:"status"`
	Failing []Failure         `json:"failing"`
	Notes   map[string]string `json:"notes,omitempty"`
}

// Add adds a check, for a component made after the checker; it must be called before the
// checker serves.
func (c *Checker) Add(check Check) { c.checks = append(c.checks, check) }

// Note adds a fact /readyz reports beside its verdict, whatever the verdict: how the process
// runs, when that is something an operator must not miss (shells running unisolated, say). It
// must be called before the checker serves.
func (c *Checker) Note(name, text string) {
	if c.notes == nil {
		c.notes = map[string]string{}
	}
	c.notes[name] = text
}

// Healthz answers 200 while the process can answer at all: it is alive.
func Healthz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"alive"}` + "\n"))
	})
}

// Readyz answers 200 {"status":"ready","failing":[]} while every check passes, and 503
// {"status":"not ready","failing":[{"check":…,"error":…}]} naming those that fail.
func (c *Checker) Readyz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := verdict{Status: "ready", Failing: c.Failing(r.Context()), Notes: c.notes}
		code := http.StatusOK
		if len(v.Failing) > 0 {
			v.Status, code = "not ready", http.StatusServiceUnavailable
		} else {
			v.Failing = []Failure{}
		}
		body, _ := json.Marshal(v)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(code)
		_, _ = w.Write(append(body, '\n'))
	})
}

// Handle adds /healthz and /readyz to mux.
func (c *Checker) Handle(mux *http.ServeMux) {
	mux.Handle("GET "+HealthzPath, Healthz())
	mux.Handle("GET "+ReadyzPath, c.Readyz())
}

// Flag is a condition a process sets and clears (its listeners serving, a connection up); its
// Check fails with the reason given while it is clear.
type Flag struct {
	set    atomic.Bool
	reason string
}

// NewFlag returns a clear flag whose check fails with reason.
func NewFlag(reason string) *Flag { return &Flag{reason: reason} }

// Set makes the condition hold; Clear makes it fail.
func (f *Flag) Set()   { f.set.Store(true) }
func (f *Flag) Clear() { f.set.Store(false) }

// IsSet reports whether the condition holds.
func (f *Flag) IsSet() bool { return f.set.Load() }

// Check is the flag as a named check.
func (f *Flag) Check(name string) Check {
	return Check{Name: name, Probe: func(context.Context) error {
		if f.set.Load() {
			return nil
		}
		return errors.New(f.reason)
	}}
}
