package client

import "context"

// The W3C trace context of a shell (the OpenTelemetry names for environment carriers), sent on
// every request as the traceparent and tracestate headers so the servers continue the trace of
// the command that ran this client. A value that is not well formed is left out, never an
// error: tracing must not stop a call.
const (
	envTraceparent = "TRACEPARENT"
	envTracestate  = "TRACESTATE"

	traceparentHeader = "traceparent"
	tracestateHeader  = "tracestate"

	maxTracestateLen = 512 // the W3C limit a propagator must accept
)

// traceContext is a trace context to send; zero sends none.
type traceContext struct{ parent, state string }

// newTraceContext keeps parent and state when parent is a well-formed traceparent, state only
// when it is printable ASCII within the W3C length.
func newTraceContext(parent, state string) traceContext {
	if !validTraceparent(parent) {
		return traceContext{}
	}
	if len(state) > maxTracestateLen || !printableASCII(state) {
		state = ""
	}
	return traceContext{parent: parent, state: state}
}

type traceKey struct{}

// WithTrace returns ctx carrying a trace context that the requests made with it send instead
// of the shell's TRACEPARENT and TRACESTATE (an MCP engine's _meta.traceparent, for one call).
// A malformed traceparent leaves ctx as it is.
func WithTrace(ctx context.Context, traceparent, tracestate string) context.Context {
	tc := newTraceContext(traceparent, tracestate)
	if tc.parent == "" {
		return ctx
	}
	return context.WithValue(ctx, traceKey{}, tc)
}

// traceFor is the trace context a request made with ctx sends: ctx's, else the shell's.
func traceFor(ctx context.Context, shell traceContext) traceContext {
	if tc, ok := ctx.Value(traceKey{}).(traceContext); ok {
		return tc
	}
	return shell
}

// validTraceparent accepts version-format-trace_id-span_id-flags in lower-case hex, as W3C
// Trace Context level 1 parses it: version ff and all-zero ids are invalid, and a later
// version may append fields after a dash.
func validTraceparent(s string) bool {
	const n = 55
	if len(s) < n || (len(s) > n && (s[0:2] == "00" || s[n] != '-')) {
		return false
	}
	for i, field := range [][2]int{{0, 2}, {3, 35}, {36, 52}, {53, 55}} {
		if field[0] > 0 && s[field[0]-1] != '-' {
			return false
		}
		zero := true
		for _, c := range []byte(s[field[0]:field[1]]) {
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
			zero = zero && c == '0'
		}
		if (i == 1 || i == 2) && zero {
			return false
		}
	}
	return s[0:2] != "ff"
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
