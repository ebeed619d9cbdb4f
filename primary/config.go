package primary

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/turncli/turncli/internal/cliflag"
	"github.com/turncli/turncli/internal/clock"
	"github.com/turncli/turncli/internal/shellhost"
	"github.com/turncli/turncli/internal/telemetry"
	"github.com/turncli/turncli/primary/credentials"
	"github.com/turncli/turncli/primary/ha"
	"github.com/turncli/turncli/primary/interaction"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/listen"
	"github.com/turncli/turncli/primary/mcpbridge"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/store/postgres"
	"github.com/turncli/turncli/primary/surfaces/links"
	"github.com/turncli/turncli/primary/surfaces/matrix"
	"github.com/turncli/turncli/primary/surfaces/slack"
	"github.com/turncli/turncli/primary/workerhub"
)

// Config is everything the primary needs to start: one section per component, each owned by
// the component's package with its defaults, its flags (BindFlags, defaults taken from the
// section's) and its validation. Validate fills the defaults; it may be called again.
type Config struct {
	// StateDir holds credentials/, agent_cli_bin/, workspaces/, endpoints.json, the lock
	// primary.lock that keeps a second primary off it, and, unless Store.URL names another,
	// the store (turncli.db with its WAL files).
	StateDir string
	// Listen is where Run listens, and the TLS of the public listeners (New is given its
	// listeners).
	Listen listen.Config
	// Store chooses the store.
	Store StoreConfig
	// Shells are the local shells: workspaces, agent binary, isolation, environment, bounds,
	// shell user.
	Shells shellhost.Settings
	// Responses bound the responses and their fast calls.
	Responses response.Settings
	// Jobs bound the background jobs.
	Jobs jobs.Settings
	// Interaction sets the interaction tools' waits and the background agents' engine.
	Interaction interaction.Settings
	// Workers are the workers' credentials and how those that stopped answering are found.
	Workers WorkersConfig
	// HA makes this primary one of several on one PostgreSQL store (see package ha).
	HA ha.Config
	// MCPServers are MCP servers mounted as deferred toolkits (see package mcpbridge).
	MCPServers []mcpbridge.ServerConfig
	// Connections bounds the connections clients hold on the listeners (zero fields:
	// DefaultConnections).
	Connections Connections
	// Matrix is the Matrix surface: cards in the conversations' Matrix threads, answers read
	// from them (off while its homeserver is unset).
	Matrix matrix.Settings
	// Slack is the Slack surface: cards in the conversations' Slack threads, answers taken on
	// the REST listener (off while its bot token is unset).
	Slack slack.Settings
	// Links are the decision links for chats without buttons, opened on the REST listener
	// (minted only once their public base URL is set).
	Links links.Settings

	// RuntimeToken, when set, is the runtime credential; otherwise it is read from (or created
	// in) <StateDir>/credentials/runtime.token.
	RuntimeToken string
	// FirstAdminCredential, when set, is the credential of the first admin created on a fresh
	// store (no file is written then); it changes nothing once an operator exists.
	FirstAdminCredential string
	// EnableTestToolkit registers the deterministic "test" and "test_deferred" toolkits.
	EnableTestToolkit bool
	// ShutdownGrace bounds each server's graceful stop before it is stopped hard (zero:
	// DefaultShutdownGrace).
	ShutdownGrace time.Duration
	// Clock measures grants, prompts, jobs, the reaping of responses, dashboard sessions and
	// the limit on refused credentials, and paces the watch for removed operators (nil:
	// clock.System; tests pass a clocktest.Fake).
	Clock  clock.Clock
	Logger *slog.Logger
	// Telemetry is the process's tracing (nil: off, though an incoming traceparent still
	// reaches the shells). The caller shuts it down after Serve returns, flushing the last spans.
	Telemetry *telemetry.Telemetry
	// OnServing, when set, hears where the primary serves once its listeners serve, right
	// after the "primary serving" log line: mindroom-primary prints a person its banner.
	OnServing func(Endpoints)
	// RouteLibraryLogs sends what the libraries log on their own (the standard log package,
	// gRPC, OpenTelemetry) through the primary's logger once it masks the live credentials.
	// It changes process-wide state: only a main sets it.
	RouteLibraryLogs bool

	// fence is the fencing token of the lease this primary holds, which its store's every
	// write carries (zero: none; Run sets it for an active/standby term).
	fence int64
}

// WorkersConfig is the workers' section: their credentials and their liveness.
type WorkersConfig struct {
	Credentials credentials.Workers
	// Liveness says how workers that stopped answering are found (zero fields:
	// workerhub.DefaultLiveness).
	Liveness workerhub.Liveness
}

// BindFlags binds the section to fs.
func (w *WorkersConfig) BindFlags(fs *flag.FlagSet) {
	w.Credentials.BindFlags(fs)
	w.Liveness.BindFlags(fs)
}

// Validate reports settings that cannot work, then fills the liveness's zero fields from
// workerhub.DefaultLiveness.
func (w *WorkersConfig) Validate() error {
	if err := w.Credentials.Validate(); err != nil {
		return err
	}
	if err := w.Liveness.Validate(); err != nil {
		return err
	}
	w.Liveness = w.Liveness.OrDefaults()
	return nil
}

// DefaultShutdownGrace bounds each server's graceful stop unless configured.
const DefaultShutdownGrace = 10 * time.Second

// DefaultStateDir is the state directory unless configured.
const DefaultStateDir = ".turncli"

// BindFlags binds every section's flags to fs. The MCP servers, the credentials given in the
// environment, the logger and the telemetry are the command's to read (they are not flags of
// the primary's sections).
func (c *Config) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.StateDir, "state-dir", cliflag.Env("MINDROOM_STATE_DIR", DefaultStateDir), "state directory (env MINDROOM_STATE_DIR)")
	fs.BoolVar(&c.EnableTestToolkit, "enable-test-toolkit", cliflag.EnvOn("MINDROOM_ENABLE_TEST_TOOLKIT"), "register the deterministic test toolkits (env MINDROOM_ENABLE_TEST_TOOLKIT=1)")
	c.Listen.BindFlags(fs)
	c.Store.BindFlags(fs)
	c.Shells.BindFlags(fs)
	c.Responses.BindFlags(fs)
	c.Jobs.BindFlags(fs)
	c.Interaction.BindFlags(fs)
	c.Workers.BindFlags(fs)
	c.HA.BindFlags(fs)
	c.Connections.BindFlags(fs)
	c.Matrix.BindFlags(fs)
	c.Slack.BindFlags(fs)
	c.Links.BindFlags(fs)
}

// Validate checks the configuration and fills defaults, each section its own. Calling it
// again changes nothing.
func (c *Config) Validate() error {
	if c.StateDir == "" {
		return errors.New("state dir is required")
	}
	abs, err := filepath.Abs(c.StateDir)
	if err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	c.StateDir = abs
	for _, section := range []interface{ Validate() error }{
		&c.Shells, &c.Listen, &c.Connections, &c.Workers, &c.Responses, &c.Jobs, &c.Interaction, &c.HA, mcpServers(c.MCPServers), &c.Matrix, &c.Slack, &c.Links,
	} {
		if err := section.Validate(); err != nil {
			return err
		}
	}
	if c.HA.Enabled && !postgres.IsURL(c.Store.URL) {
		return errors.New("active/standby primaries need a PostgreSQL store (a postgres:// store URL)")
	}
	if c.ShutdownGrace == 0 {
		c.ShutdownGrace = DefaultShutdownGrace
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Clock == nil {
		c.Clock = clock.System
	}
	if c.Telemetry == nil {
		c.Telemetry = telemetry.Disabled()
	}
	return nil
}

// mcpServers validates the MCP servers as one section.
type mcpServers []mcpbridge.ServerConfig

func (s mcpServers) Validate() error { return mcpbridge.ValidateAll(s) }
