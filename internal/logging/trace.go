package logging

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// TraceHandler adds trace_id and span_id to every record logged with a context that holds a
// span context (a live span, or the remote one a request carried while tracing is off), so a
// log line can be found from its trace and back. Records logged without one pass unchanged.
type TraceHandler struct{ next slog.Handler }

// WithTrace wraps h in a TraceHandler.
func WithTrace(h slog.Handler) slog.Handler { return TraceHandler{next: h} }

// Enabled implements slog.Handler.
func (h TraceHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

// Handle implements slog.Handler.
func (h TraceHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r = r.Clone() // the caller's record may be handled by others too
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.next.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h TraceHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return TraceHandler{next: h.next.WithAttrs(attrs)}
}

// WithGroup implements slog.Handler.
func (h TraceHandler) WithGroup(name string) slog.Handler {
	return TraceHandler{next: h.next.WithGroup(name)}
}
