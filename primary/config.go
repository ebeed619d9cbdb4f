package primary

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/turncli/turncli/internal/bashexec"
	"github.com/turncli/turncli/internal/clock"
	"github.com/turncli/turncli/internal/loopback"
	"github.com/turncli/turncli/internal/shellhost"
	"github.com/turncli/turncli/internal/telemetry"
	"github.com/turncli/turncli/primary/interaction"
	"github.com/turncli/turncli/primary/mcpbridge"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/store/postgres"
	"github.com/turncli/turncli/primary/workerhub"
)

// Config is everything the primary needs to start.
type Config struct {
	// StateDir holds credentials/, agent_cli_bin/, workspaces/, endpoints.json, the lock
	// primary.lock that keeps a second primary off it, and, unless StoreURL names another, the
	// store (turncli.db with its WAL files).
	StateDir string
	// StoreURL chooses the store: empty for SQLite in <StateDir>/turncli.db, a postgres:// or
	// postgresql:// URL for PostgreSQL (pool settings as its pool_* parameters), anything
	// else the path of a SQLite file.
	StoreURL string
	// GRPCListen serves the gRPC APIs (runtime, later operators and workers).
	GRPCListen string
	// HTTPListen serves the same APIs as REST through grpc-gateway.
	HTTPListen string
	// AgentCLIListen serves the Agent CLI REST routes for local shells; loopback only.
	AgentCLIListen string
	// MetricsListen, when set, serves Prometheus /metrics, /healthz and /readyz.
	MetricsListen string
	// RuntimeToken, when set, is the runtime credential; otherwise it is read from (or created
	// in) <StateDir>/credentials/runtime.token.
	RuntimeToken string
	// FirstAdminCredential, when set, is the credential of the first admin created on a fresh
	// store (no file is written then); it changes nothing once an operator exists.
	FirstAdminCredential string
	// WorkerCredentialsDir, when set, is a read-only directory of <key>.token files (a mounted
	// Secret, say) read at start in addition to <StateDir>/credentials/workers/; nothing in it
	// is created or changed.
	WorkerCredentialsDir string
	// WorkerCredentials maps worker keys to credentials configured in addition to those found
	// in <StateDir>/credentials/workers/<key>.token.
	WorkerCredentials map[string]string
	// WorkerKeys are keys to create a credential file for when none exists yet.
	WorkerKeys []string
	// EnableTestToolkit registers the deterministic "test" and "test_deferred" toolkits.
	EnableTestToolkit bool
	// AgentBinary and AgentArgs are what agent_cli_bin/mindroom-agent runs.
	AgentBinary string
	AgentArgs   []string
	// Isolation says how local shells and jobs are kept apart (sandboxes, agents' own users,
	// limits); its zero value isolates wherever the host can.
	Isolation shellhost.IsolationConfig
	// WorkspacesDir holds the agents' workspaces; empty means <StateDir>/workspaces.
	WorkspacesDir string
	// ShellEnvAllow names the variables local shells inherit from the primary.
	ShellEnvAllow []string
	// ShellDefaultTimeout, ShellMaxTimeout and ShellGrace bound local commands (zero:
	// shellhost defaults).
	ShellDefaultTimeout time.Duration
	ShellMaxTimeout     time.Duration
	ShellGrace          time.Duration
	// Connections bounds the connections clients hold on the listeners (zero fields:
	// DefaultConnections).
	Connections Connections
	// WorkerLiveness says how workers that stopped answering are found (zero fields:
	// workerhub.DefaultLiveness).
	WorkerLiveness workerhub.Liveness
	// MCPServers are MCP servers mounted as deferred toolkits (see package mcpbridge).
	MCPServers []mcpbridge.ServerConfig
	// TLSCertFile and TLSKeyFile, when set, serve the gRPC and REST APIs over TLS (workers then
	// dial with --tls-ca). The loopback Agent CLI listener never uses TLS.
	TLSCertFile string
	TLSKeyFile  string
	// AgentEngine runs background agents: a built-in engine name (see
	// interaction.EngineNames) or "command:<bash command>"; empty refuses background agents.
	AgentEngine string
	// JobCommandCeiling, JobAgentCeiling and JobGrace bound background jobs (zero: the
	// contract's 60 minutes, one week, and 2 s between SIGTERM and SIGKILL).
	JobCommandCeiling time.Duration
	JobAgentCeiling   time.Duration
	JobGrace          time.Duration
	// AgentReportGrace is how long after start a worker may take to report a background agent
	// an earlier primary started there before it is recorded interrupted (zero: 5 minutes).
	AgentReportGrace time.Duration
	// FastCallBudget is how long a tools.call's answer may wait for the call to settle, so a
	// fast tool is answered terminal in one request (zero: 5 ms; negative: answer at admission).
	FastCallBudget time.Duration
	// PromptWait bounds how long request_approval and permission_prompt wait for a person
	// (zero: about 280 s, as the contract says).
	PromptWait time.Duration
	// MaxOpenResponses bounds the responses open at once on the primary, and
	// MaxOpenResponsesPerCredential those one runtime credential holds (zero: the response
	// package's defaults). ResponseReapEvery is how often responses whose grant expired are
	// closed (zero: every 30 s).
	MaxOpenResponses              int
	MaxOpenResponsesPerCredential int
	ResponseReapEvery             time.Duration
	// WorkersOnly refuses responses without a worker key: no agent command or job runs on
	// this host (see response.Config.WorkersOnly).
	WorkersOnly bool
	// Clock measures grants, prompts, jobs, the reaping of responses, dashboard sessions and
	// the limit on refused credentials, and paces the watch for removed operators (nil:
	// clock.System; tests pass a clocktest.Fake).
	Clock clock.Clock
	// ActiveStandby makes this primary one of several sharing a PostgreSQL store: it serves
	// only while it holds the leader lease, stands by until then, and stops (Run fails) when
	// it loses the lease. See package leader.
	ActiveStandby bool
	// AdvertiseAddr is the gRPC address the other primaries name to clients while this one
	// leads (default: the gRPC listener's address).
	AdvertiseAddr string
	// LeaseTTL and LeaseRenew time the leader lease (zero: leader.DefaultTTL and
	// leader.DefaultRenew).
	LeaseTTL   time.Duration
	LeaseRenew time.Duration
	// fence is the fencing token of the lease this primary holds, which its store's every
	// write carries (zero: none; Run sets it).
	fence int64
	// ShutdownGrace bounds a graceful stop before the servers are stopped hard.
	ShutdownGrace time.Duration
	Logger        *slog.Logger
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
}

// Validate checks the configuration and fills defaults.
func (c *Config) Validate() error {
	if c.StateDir == "" {
		return errors.New("state dir is required")
	}
	abs, err := filepath.Abs(c.StateDir)
	if err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	c.StateDir = abs
	if c.AgentBinary == "" {
		return errors.New("agent binary is required")
	}
	if c.AgentCLIListen != "" { // Run requires it; New checks the listener it is given
		if err := requireLoopback(c.AgentCLIListen); err != nil {
			return fmt.Errorf("agent cli listener must be a loopback address: %w", err)
		}
	}
	if (c.TLSCertFile == "") != (c.TLSKeyFile == "") {
		return errors.New("TLS needs both a certificate and a key file")
	}
	c.Connections = c.Connections.orDefaults()
	if err := c.Connections.validate(); err != nil {
		return err
	}
	if err := c.WorkerLiveness.Validate(); err != nil {
		return err
	}
	if err := mcpbridge.ValidateAll(c.MCPServers); err != nil {
		return err
	}
	if c.AgentEngine != "" {
		if _, err := interaction.ParseEngine(c.AgentEngine); err != nil {
			return fmt.Errorf("agent engine: %w", err)
		}
	}
	if c.ActiveStandby && !postgres.IsURL(c.StoreURL) {
		return errors.New("active/standby primaries need a PostgreSQL store (a postgres:// store URL)")
	}
	if c.FastCallBudget > maxFastCallBudget {
		return fmt.Errorf("fast call budget %v is over its maximum %v", c.FastCallBudget, maxFastCallBudget)
	}
	if c.JobCommandCeiling < 0 || c.JobAgentCeiling < 0 || c.JobGrace < 0 {
		return errors.New("job ceilings and grace cannot be negative")
	}
	if c.MaxOpenResponses < 0 || c.MaxOpenResponsesPerCredential < 0 || c.ResponseReapEvery < 0 {
		return errors.New("open response limits and the reap interval cannot be negative")
	}
	if c.MaxOpenResponses == 0 {
		c.MaxOpenResponses = response.DefaultMaxOpen
	}
	if c.MaxOpenResponsesPerCredential == 0 {
		c.MaxOpenResponsesPerCredential = response.DefaultMaxOpenPerCredential
	}
	if c.ResponseReapEvery == 0 {
		c.ResponseReapEvery = response.DefaultReapEvery
	}
	if c.ShellDefaultTimeout == 0 {
		c.ShellDefaultTimeout = shellhost.DefaultCommandTimeout
	}
	if c.ShellMaxTimeout == 0 {
		c.ShellMaxTimeout = shellhost.DefaultMaxTimeout
	}
	if c.ShellGrace == 0 {
		c.ShellGrace = bashexec.DefaultGrace
	}
	if c.ShutdownGrace == 0 {
		c.ShutdownGrace = 10 * time.Second
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

// requireLoopback accepts host:port whose host is a loopback IP or "localhost".
func requireLoopback(addr string) error {
	if !loopback.Addr(addr) {
		return fmt.Errorf("%q is not a loopback address", addr)
	}
	return nil
}

// maxFastCallBudget bounds FastCallBudget: past it a call's first answer would be a long poll
// the caller did not ask for.
const maxFastCallBudget = time.Second

// fastCallBudget is the responses' FastCallBudget for the configured value.
func fastCallBudget(configured time.Duration) time.Duration {
	switch {
	case configured < 0:
		return 0
	case configured == 0:
		return response.DefaultFastCallBudget
	}
	return configured
}
