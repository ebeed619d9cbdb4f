// Package logging builds the slog logger of a daemon from its --log-format and --log-level
// flags: JSON lines (the default, for collectors) or logfmt-like text (for a terminal), each
// record logged in a traced context carrying its trace_id and span_id. It owns the handler
// choice and nothing else: what is logged, and the redaction of secrets, belong to
// the processes.
package logging

import (
	"fmt"
	"io"
	"log/slog"
)

// Formats a daemon's --log-format accepts.
const (
	FormatJSON = "json"
	FormatText = "text"
)

// DefaultFormat is the daemons' format unless configured.
const DefaultFormat = FormatJSON

// New returns a logger writing to w in format ("json" or "text") at level ("debug", "info",
// "warn" or "error", as slog.Level parses them), adding the trace ids of a record's context.
func New(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case FormatJSON:
		return slog.New(WithTrace(slog.NewJSONHandler(w, opts))), nil
	case FormatText:
		return slog.New(WithTrace(slog.NewTextHandler(w, opts))), nil
	}
	return nil, fmt.Errorf("log format %q: want %s or %s", format, FormatJSON, FormatText)
}
