package worker

import (
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/turncli/turncli/internal/connlimit"
	"github.com/turncli/turncli/internal/leaderconn"
	"github.com/turncli/turncli/internal/loopback"
	"github.com/turncli/turncli/internal/shellhost"
	"github.com/turncli/turncli/internal/telemetry"
)

// Config is what a worker needs.
type Config struct {
	// PrimaryAddr is the primary's gRPC address (host:port), or a comma-separated list of the
	// addresses of active/standby primaries (a name resolving to several addresses counts as
	// each): the worker follows whichever leads.
	PrimaryAddr string
	// TLSCAFile, when set, makes the connection TLS, verified against this CA bundle.
	TLSCAFile string
	// Insecure allows a plaintext connection to a primary that is not on loopback (the
	// credential then crosses the network in clear); without it such a primary needs TLSCAFile.
	Insecure bool
	// Credential is the worker credential configured on the primary for Key.
	Credential string
	// Key is the worker key responses are routed by; ID is this worker's stable id.
	Key string
	ID  string
	// Capacity is how many commands may run at once (0: no limit).
	Capacity int
	// StateDir holds agent_cli_bin/, workspaces/ and jobs/ (the background jobs' records, logs
	// and exit statuses, which a restarted worker on the same StateDir takes over).
	StateDir string
	// ProxyListen is the sandbox proxy's loopback address (port 0 picks one).
	ProxyListen string
	// MetricsListen, when set, serves Prometheus /metrics, /healthz and /readyz (Run only).
	MetricsListen string
	// Connections bounds the connections the sandbox proxy holds, per remote address (on
	// loopback, per user: one agent's shells cannot take another's) and in all (zero fields:
	// connlimit.DefaultConfig).
	Connections connlimit.Config
	// Shells is the shells' section, the same as the primary's for its local shells: the
	// agent binary, isolation, workspaces, inherited variables, timeouts and the user shells
	// and jobs run as without isolation (nil: this process's own; mindroom-worker's flag
	// defaults to shellpriv.Default, nobody:nogroup when root).
	Shells shellhost.Settings
	// Reconnect backoff bounds.
	MinBackoff time.Duration
	MaxBackoff time.Duration
	Logger     *slog.Logger
	// Telemetry is the process's tracing (nil: off, though a command's trace context still
	// reaches its shell and the proxy's calls). The caller shuts it down after Run returns.
	Telemetry *telemetry.Telemetry
}

// Validate checks the configuration and fills defaults.
func (c *Config) Validate() error {
	if len(leaderconn.Split(c.PrimaryAddr)) == 0 {
		return errors.New("primary address is required")
	}
	if c.TLSCAFile == "" && !c.Insecure && slices.ContainsFunc(leaderconn.Split(c.PrimaryAddr), func(a string) bool { return !loopbackTarget(a) }) {
		return errors.New("refusing to send the worker credential in clear to a primary that is not on loopback: give a TLS CA (--tls-ca) or allow it explicitly (--insecure)")
	}
	if c.Credential == "" {
		return errors.New("worker credential is required")
	}
	if c.Key == "" || c.ID == "" || utf8.RuneCountInString(c.ID) > 128 {
		return errors.New("worker key and id (1..128 characters) are required")
	}
	if c.StateDir == "" {
		return errors.New("state dir is required")
	}
	abs, err := filepath.Abs(c.StateDir)
	if err != nil {
		return err
	}
	c.StateDir = abs
	if c.ProxyListen == "" {
		c.ProxyListen = "127.0.0.1:0"
	}
	if !loopback.Addr(c.ProxyListen) {
		return errors.New("the sandbox proxy listens on loopback only")
	}
	if err := c.Shells.Validate(); err != nil {
		return err
	}
	c.Connections = c.Connections.OrDefaults()
	if err := c.Connections.Validate(); err != nil {
		return err
	}
	if c.MinBackoff == 0 {
		c.MinBackoff = 100 * time.Millisecond
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = 5 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Telemetry == nil {
		c.Telemetry = telemetry.Disabled()
	}
	return nil
}

// loopbackTarget reports whether a dial target names a loopback host (or an in-process one,
// such as the passthrough targets tests use).
func loopbackTarget(addr string) bool {
	if strings.Contains(addr, ":///") {
		return true // a resolver target with a custom dialer, not a network address
	}
	return loopback.Addr(addr)
}
