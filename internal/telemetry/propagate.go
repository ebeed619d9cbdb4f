package telemetry

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
)

// Propagator is the W3C trace-context propagator of every hop: the traceparent and tracestate
// headers, metadata keys and MCP _meta keys.
var Propagator propagation.TextMapPropagator = propagation.TraceContext{}

// The W3C names: header and metadata keys, and the shell's environment variables (the
// OpenTelemetry convention for environment carriers).
const (
	TraceparentKey = "traceparent"
	TracestateKey  = "tracestate"
	TraceparentEnv = "TRACEPARENT"
	TracestateEnv  = "TRACESTATE"
)

// Inject returns the traceparent and tracestate of the span context in ctx; both are empty when
// ctx holds none.
func Inject(ctx context.Context) (traceparent, tracestate string) {
	c := propagation.MapCarrier{}
	Propagator.Inject(ctx, c)
	return c[TraceparentKey], c[TracestateKey]
}

// Extract returns ctx holding the remote span context traceparent and tracestate name; ctx
// unchanged when traceparent is empty or malformed.
func Extract(ctx context.Context, traceparent, tracestate string) context.Context {
	if traceparent == "" {
		return ctx
	}
	return Propagator.Extract(ctx, propagation.MapCarrier{TraceparentKey: traceparent, TracestateKey: tracestate})
}

// ShellEnv returns the TRACEPARENT and TRACESTATE a command started in ctx gets, so the
// programs it runs continue the trace; empty when ctx holds no span context.
func ShellEnv(ctx context.Context) map[string]string {
	traceparent, tracestate := Inject(ctx)
	if traceparent == "" {
		return nil
	}
	env := map[string]string{TraceparentEnv: traceparent}
	if tracestate != "" {
		env[TracestateEnv] = tracestate
	}
	return env
}

// ExtractHeader returns ctx holding the remote span context of h's traceparent and tracestate.
func ExtractHeader(ctx context.Context, h http.Header) context.Context {
	return Propagator.Extract(ctx, propagation.HeaderCarrier(h))
}

// ContinueHTTP wraps an HTTP server's handler so each request's context continues the trace its
// traceparent header names, without a span of its own: for a hop whose work the handler's own
// spans already cover, where a server span per request would double the spans exported.
func ContinueHTTP(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(TraceparentKey) == "" {
			h.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r.WithContext(ExtractHeader(r.Context(), r.Header)))
	})
}
