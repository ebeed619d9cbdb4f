// Package logging builds the slog logger of a daemon from its --log-format and --log-level
// flags: logfmt-like text for a person at a terminal, JSON lines for collectors, chosen by
// whether the output is a terminal unless configured; durations as text ("562ms") in both;
// each record logged in a traced context carrying its trace_id and span_id. It owns the
// handler choice and nothing else: what is logged, and the redaction of secrets, belong to
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
	// FormatAuto is text when the output is a terminal, JSON otherwise (a pipe, a file, a
	// container runtime, systemd's journal).
	FormatAuto = "auto"
)

// DefaultLevel is the daemons' log level unless configured.
const DefaultLevel = "info"

// DefaultFormat is the daemons' format unless configured.
const DefaultFormat = FormatAuto

// FormatUsage is the help text of a --log-format flag.
const FormatUsage = "auto (text on a terminal, JSON otherwise), json or text"

// New returns a logger writing to w in format ("auto", "json" or "text") at level ("debug",
// "info", "warn" or "error", as slog.Level parses them), adding the trace ids of a record's
// context.
func New(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lv, ReplaceAttr: durationText}
	if format == FormatAuto {
		format = FormatJSON
		if IsTerminal(w) {
			format = FormatText
		}
	}
	switch format {
	case FormatJSON:
		return slog.New(WithTrace(slog.NewJSONHandler(w, opts))), nil
	case FormatText:
		return slog.New(WithTrace(slog.NewTextHandler(w, opts))), nil
	}
	return nil, fmt.Errorf("log format %q: want %s, %s or %s", format, FormatAuto, FormatJSON, FormatText)
}

// durationText writes a duration as Go spells it ("562ms", "1m30s"), which a person reads at
// a glance; slog's JSON handler would write its nanoseconds.
func durationText(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.String(a.Key, a.Value.Duration().String())
	}
	return a
}
