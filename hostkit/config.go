package hostkit

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// Config is what a Host needs.
type Config struct {
	// Address is the primary's gRPC target, e.g. "127.0.0.1:7420", or a comma-separated list
	// of the addresses of active/standby primaries (a name resolving to several addresses
	// counts as each): the host follows whichever leads.
	Address string
	// Token is the runtime credential, sent as `authorization: Bearer <token>`.
	Token string
	// HostID identifies this host across its reconnects (1..128 characters): a new stream with
	// the same id replaces an old one the primary still holds. Default "<hostname>:<pid>".
	HostID string
	// TransportCredentials secures the connection; nil means plaintext (a loopback primary).
	TransportCredentials credentials.TransportCredentials
	// DialOptions are added after hostkit's own (tests pass a bufconn dialer here).
	DialOptions []grpc.DialOption
	// MinBackoff and MaxBackoff bound the jittered exponential wait between reconnects.
	// Defaults 100 ms and 10 s.
	MinBackoff time.Duration
	MaxBackoff time.Duration
	// StopGrace is how long Run, once its context ended, lets running calls finish before
	// cancelling them. Default 10 s.
	StopGrace time.Duration
	// OnRegistered, when set, is called each time every toolkit has been registered on a new
	// connection, with the primary's session id. It must not block.
	OnRegistered func(session string)
	Logger       *slog.Logger
	// TracerProvider records a span per call, continuing the trace of the primary's dispatch
	// of it; the handler's context carries the span. Nil: Run builds one from the standard
	// OTEL_* environment (OTLP over gRPC, off unless OTEL_EXPORTER_OTLP_ENDPOINT or
	// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set) and flushes it when it returns.
	TracerProvider trace.TracerProvider
}

// Validate checks the configuration and fills defaults.
func (c *Config) Validate() error {
	if c.Address == "" {
		return errors.New("hostkit: primary address is required")
	}
	if c.Token == "" || strings.ContainsAny(c.Token, " \t\r\n") {
		return errors.New("hostkit: runtime token is required and must not contain whitespace")
	}
	if c.HostID == "" {
		name, _ := os.Hostname()
		c.HostID = fmt.Sprintf("%s:%d", name, os.Getpid())
	}
	if n := utf8.RuneCountInString(c.HostID); n < 1 || n > 128 {
		return errors.New("hostkit: host id must be 1..128 characters")
	}
	if c.MinBackoff <= 0 {
		c.MinBackoff = 100 * time.Millisecond
	}
	if c.MaxBackoff < c.MinBackoff {
		c.MaxBackoff = max(10*time.Second, c.MinBackoff)
	}
	if c.StopGrace <= 0 {
		c.StopGrace = 10 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}
