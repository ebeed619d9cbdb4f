package primary

import (
	"errors"
	"flag"
	"log/slog"
	"net/http"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"

	"github.com/turncli/turncli/internal/connlimit"
	"github.com/turncli/turncli/internal/logging"
)

// Connections bounds what clients can hold open on the primary's listeners: how many
// connections, and for how long when they do nothing. Every listener's server applies the
// same idle and handshake timeouts.
type Connections struct {
	// Limits bounds the connections of the gRPC, REST and Agent CLI listeners together; the
	// metrics listener has limits of its own, so a flood of the APIs cannot starve the health
	// checks that would report it.
	Limits connlimit.Config
	// IdleTimeout closes a connection that carried nothing for this long: an HTTP connection
	// between requests, a gRPC connection with no call open.
	IdleTimeout time.Duration
	// HandshakeTimeout bounds a new connection's TLS handshake and HTTP/2 preface, and an HTTP
	// request's headers.
	HandshakeTimeout time.Duration
	// MaxAge, when set, makes gRPC clients move to a new connection after this long (GOAWAY),
	// and MaxAgeGrace then bounds the calls still open on the old one. Off by default: a
	// worker's single long call carries its running commands, which a forced end would fail.
	MaxAge, MaxAgeGrace time.Duration
}

// DefaultConnections returns the defaults.
func DefaultConnections() Connections {
	return Connections{Limits: connlimit.DefaultConfig(), IdleTimeout: 2 * time.Minute, HandshakeTimeout: 10 * time.Second}
}

// The gRPC server pings a connection that has been quiet for keepaliveTime and closes it if
// the ping is not answered within keepaliveTimeout: a peer that vanished without a FIN (a
// half-open connection) is found in about a minute, not when TCP gives up hours later.
const (
	keepaliveTime    = time.Minute
	keepaliveTimeout = 20 * time.Second
)

// orDefaults fills each zero field from DefaultConnections.
func (c Connections) orDefaults() Connections {
	d := DefaultConnections()
	c.Limits = c.Limits.OrDefaults()
	if c.IdleTimeout == 0 {
		c.IdleTimeout = d.IdleTimeout
	}
	if c.HandshakeTimeout == 0 {
		c.HandshakeTimeout = d.HandshakeTimeout
	}
	return c
}

// Validate fills each zero field from DefaultConnections and reports settings that cannot
// work.
func (c *Connections) Validate() error {
	*c = c.orDefaults()
	return c.validate()
}

// validate reports settings that cannot work (after orDefaults).
func (c Connections) validate() error {
	if err := c.Limits.Validate(); err != nil {
		return err
	}
	if c.IdleTimeout < 0 || c.HandshakeTimeout < 0 || c.MaxAge < 0 || c.MaxAgeGrace < 0 {
		return errors.New("connection timeouts must not be negative")
	}
	return nil
}

// BindFlags binds the settings to fs, with DefaultConnections's values as the flags' defaults.
func (c *Connections) BindFlags(fs *flag.FlagSet) {
	d := DefaultConnections()
	c.Limits.BindFlags(fs)
	fs.DurationVar(&c.IdleTimeout, "idle-timeout", d.IdleTimeout, "close client connections idle this long (HTTP between requests, gRPC with no call open)")
	fs.DurationVar(&c.HandshakeTimeout, "handshake-timeout", d.HandshakeTimeout, "longest a new connection may take for its TLS handshake and HTTP/2 preface, or a request for its headers")
	fs.DurationVar(&c.MaxAge, "grpc-max-connection-age", 0, "move gRPC clients to a new connection after this long; 0: never (a forced end fails a worker's running commands)")
	fs.DurationVar(&c.MaxAgeGrace, "grpc-max-connection-age-grace", 0, "with --grpc-max-connection-age, how long calls may still run on the old connection; 0: no bound")
}

// grpcOptions are the gRPC server's connection settings.
func (c Connections) grpcOptions() []grpc.ServerOption {
	params := keepalive.ServerParameters{MaxConnectionIdle: c.IdleTimeout, Time: keepaliveTime, Timeout: keepaliveTimeout}
	if c.MaxAge > 0 {
		params.MaxConnectionAge, params.MaxConnectionAgeGrace = c.MaxAge, c.MaxAgeGrace
	}
	return []grpc.ServerOption{
		grpc.KeepaliveParams(params),
		// Clients may ping this often, with or without calls open (workers and tool hosts ping
		// every 10 s); a client pinging faster is disconnected.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 5 * time.Second, PermitWithoutStream: true}),
		grpc.ConnectionTimeout(c.HandshakeTimeout),
		// A hard stop after the grace still waits for the handlers it cancelled: the store
		// closes after them, so no handler writes to a closed store or a removed state dir.
		grpc.WaitForHandlers(true),
	}
}

// httpServer is an HTTP server for handler with the connection settings, its own errors
// logged on log.
func (c Connections) httpServer(handler http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler: handler, ReadHeaderTimeout: c.HandshakeTimeout, IdleTimeout: c.IdleTimeout,
		ErrorLog: logging.HTTPServerLog(log),
	}
}

// limit counts the connections of lis's listeners, refusing those over the limits in each
// listener's protocol (over TLS where lis.TLS is set).
func (c Connections) limit(lis Listeners, log *slog.Logger) Listeners {
	apis := connlimit.New(c.Limits, log)
	grpcRefusal, restRefusal := connlimit.HTTP2, connlimit.HTTP1
	if lis.TLS != nil {
		grpcRefusal = connlimit.OverTLS(lis.TLS, "h2", grpcRefusal)
		restRefusal = connlimit.OverTLS(lis.TLS, "http/1.1", restRefusal)
	}
	lis.GRPC = apis.Wrap(lis.GRPC, grpcRefusal)
	lis.HTTP = apis.Wrap(lis.HTTP, restRefusal)
	lis.AgentCLI = apis.Wrap(lis.AgentCLI, connlimit.HTTP1)
	if lis.Metrics != nil {
		lis.Metrics = connlimit.New(connlimit.ProbeConfig, log).Wrap(lis.Metrics, connlimit.HTTP1)
	}
	return lis
}
