package secrets

import (
	"context"
	"fmt"
	"log/slog"
)

// Handler is a slog.Handler that redacts the live secrets of a Registry from every record
// before passing it on: its message and every attribute, at any level and in any group. Log
// lines quote texts agents and tools wrote (inputs, errors, commands), so no caller has to
// remember which of them may hold a credential.
type Handler struct {
	next slog.Handler
	live *Registry
}

// NewHandler returns a Handler passing redacted records to next.
func NewHandler(next slog.Handler, live *Registry) *Handler { return &Handler{next: next, live: live} }

// Enabled implements slog.Handler.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

// Handle implements slog.Handler.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.live.Redact(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

// WithAttrs implements slog.Handler.
func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = h.attr(a)
	}
	return &Handler{next: h.next.WithAttrs(red), live: h.live}
}

// WithGroup implements slog.Handler.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{next: h.next.WithGroup(name), live: h.live}
}

// attr returns a with its value redacted. A value that is not a string (an error, a
// Stringer, a struct) is replaced by its redacted text when its text holds a secret.
func (h *Handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.live.Redact(v.String()))
	case slog.KindGroup:
		group := v.Group()
		red := make([]slog.Attr, len(group))
		for i, g := range group {
			red[i] = h.attr(g)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(red...)}
	case slog.KindAny:
		var text string
		if err, ok := v.Any().(error); ok {
			text = err.Error()
		} else {
			text = fmt.Sprintf("%+v", v.Any())
		}
		if red := h.live.Redact(text); red != text {
			return slog.String(a.Key, red)
		}
		return slog.Attr{Key: a.Key, Value: v}
	default: // numbers, booleans, times, durations hold no secret
		return slog.Attr{Key: a.Key, Value: v}
	}
}
