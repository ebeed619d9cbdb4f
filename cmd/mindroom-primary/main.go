// Command mindroom-primary runs the turncli primary: responses, grants, windows, receipts, the
// tool catalog, local shells and every API. `mindroom-primary shell` opens a response on a
// running primary and an interactive Bash inside one of its windows; `mindroom-primary
// operators` adds, lists and removes operators; `mindroom-primary version` (or --version)
// prints the build.
//
// main is wiring only: flags (with environment fallbacks) → primary.Config → primary.Run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/turncli/turncli/client"
	"github.com/turncli/turncli/client/mcp"
	"github.com/turncli/turncli/internal/buildinfo"
	"github.com/turncli/turncli/internal/cliflag"
	"github.com/turncli/turncli/internal/logging"
	"github.com/turncli/turncli/internal/procsec"
	"github.com/turncli/turncli/internal/shellhost"
	"github.com/turncli/turncli/internal/shellpriv"
	"github.com/turncli/turncli/internal/statedir"
	"github.com/turncli/turncli/internal/telemetry"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/leader"
	"github.com/turncli/turncli/primary/mcpbridge"
	"github.com/turncli/turncli/primary/response"
)

func main() {
	if err := procsec.CloseOnExecAbove2(); err != nil {
		fmt.Fprintln(os.Stderr, "cannot mark inherited descriptors close-on-exec:", err)
		os.Exit(1)
	}
	if err := procsec.NonDumpable(); err != nil {
		fmt.Fprintln(os.Stderr, "cannot make the process non-dumpable:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "shell":
			return shellCommand(ctx, args[1:], stdin, stdout, stderr)
		case "operators":
			return operatorsCommand(ctx, args[1:], stdout, stderr)
		case "version":
			fmt.Fprintln(stdout, buildinfo.Read().Line("mindroom-primary"))
			return 0
		case "help":
			return helpCommand(ctx, args[1:], stdin, stdout, stderr)
		case "agent":
			// The agent_cli_bin/ launcher's fallback when no mindroom-agent binary is installed.
			return client.Main(ctx, args[1:], stdin, stdout, stderr, os.Getenv, client.WithMCP(mcp.Serve))
		}
		_ = cliflag.UnknownCommand(stderr, "mindroom-primary", args[0], commands.Names())
		return 2
	}
	cfg, showVersion, err := parseFlags(args, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if errors.Is(err, cliflag.ErrReported) {
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, "mindroom-primary:", err)
		return 2
	}
	if showVersion {
		fmt.Fprintln(stdout, buildinfo.Read().Line("mindroom-primary"))
		return 0
	}
	tel, err := telemetry.FromEnv(ctx, "mindroom-primary")
	if err != nil {
		fmt.Fprintln(stderr, "mindroom-primary:", err)
		return 2
	}
	cfg.Telemetry = tel
	defer telemetry.ShutdownWithin(tel, cfg.Logger, telemetryFlush)
	if logging.IsTerminal(stderr) { // a person started it: tell them where to go
		stateDir := cfg.StateDir
		cfg.OnServing = func(ep primary.Endpoints) { fmt.Fprint(stderr, banner(ep, stateDir)) }
	}
	if err := primary.Run(ctx, cfg); err != nil {
		var held *statedir.HeldError
		if errors.As(err, &held) { // a person's mistake, told as plainly as a flag's
			fmt.Fprintln(stderr, "mindroom-primary:", err)
			return 1
		}
		cfg.Logger.Error("primary failed", "err", err)
		return 1
	}
	return 0
}

// telemetryFlush bounds the export of the last spans at exit.
const telemetryFlush = 5 * time.Second

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// parseFlags returns the primary's Config, its Logger writing to stderr, and whether --version
// was asked for. --help prints the usage on stdout.
func parseFlags(args []string, stdout, stderr io.Writer) (primary.Config, bool, error) {
	fs := flag.NewFlagSet("mindroom-primary", flag.ContinueOnError)
	fs.Usage = func() { printUsage(fs) }
	var cfg primary.Config
	var envAllow, logLevel, logFormat, workerKeys, mcpConfig, shellUser string
	var showVersion bool
	fs.StringVar(&cfg.StateDir, "state-dir", env("MINDROOM_STATE_DIR", ".turncli"), "state directory (env MINDROOM_STATE_DIR)")
	fs.StringVar(&cfg.StoreURL, "store", os.Getenv("TURNCLI_STORE_URL"), "the store: empty for SQLite in the state directory, a SQLite file's path, or a postgres:// URL (pool_max_conns=N bounds its pool) (env TURNCLI_STORE_URL)")
	fs.StringVar(&cfg.GRPCListen, "grpc-listen", env("MINDROOM_GRPC_LISTEN", "127.0.0.1:7420"), "gRPC API address; port 0 picks one (env MINDROOM_GRPC_LISTEN)")
	fs.StringVar(&cfg.HTTPListen, "http-listen", env("MINDROOM_HTTP_LISTEN", "127.0.0.1:7421"), "REST API address (env MINDROOM_HTTP_LISTEN)")
	fs.StringVar(&cfg.AgentCLIListen, "agent-cli-listen", env("MINDROOM_AGENT_CLI_LISTEN", "127.0.0.1:7422"), "loopback Agent CLI address for local shells (env MINDROOM_AGENT_CLI_LISTEN)")
	fs.StringVar(&cfg.MetricsListen, "metrics-listen", os.Getenv("MINDROOM_METRICS_LISTEN"), "Prometheus /metrics, /healthz and /readyz address; port 0 picks one; empty: none (env MINDROOM_METRICS_LISTEN)")
	fs.StringVar(&cfg.TLSCertFile, "tls-cert", os.Getenv("MINDROOM_TLS_CERT"), "PEM certificate: serve the gRPC and REST APIs over TLS (env MINDROOM_TLS_CERT)")
	fs.StringVar(&cfg.TLSKeyFile, "tls-key", os.Getenv("MINDROOM_TLS_KEY"), "PEM private key for --tls-cert (env MINDROOM_TLS_KEY)")
	fs.BoolVar(&cfg.EnableTestToolkit, "enable-test-toolkit", os.Getenv("MINDROOM_ENABLE_TEST_TOOLKIT") == "1", "register the deterministic test toolkits (env MINDROOM_ENABLE_TEST_TOOLKIT=1)")
	fs.StringVar(&cfg.AgentBinary, "agent-binary", os.Getenv("MINDROOM_AGENT_BINARY"), "mindroom-agent executable for agent_cli_bin/ (default: next to this binary, else this binary's agent subcommand)")
	fs.StringVar(&mcpConfig, "mcp-config", os.Getenv("MINDROOM_MCP_CONFIG"), `JSON file of MCP servers to mount as toolkits, {"servers":[…]} (env MINDROOM_MCP_CONFIG)`)
	fs.StringVar(&workerKeys, "worker-keys", os.Getenv("MINDROOM_WORKER_KEYS"), "comma-separated worker keys to create credentials for under <state-dir>/credentials/workers/ (env MINDROOM_WORKER_KEYS)")
	fs.StringVar(&cfg.WorkerCredentialsDir, "worker-credentials-dir", os.Getenv("MINDROOM_WORKER_CREDENTIALS_DIR"), "read-only directory of <key>.token worker credentials, such as a mounted Secret, read besides <state-dir>/credentials/workers/ (env MINDROOM_WORKER_CREDENTIALS_DIR)")
	fs.StringVar(&envAllow, "shell-env-allow", env("MINDROOM_SHELL_ENV_ALLOW", strings.Join(shellhost.DefaultEnvAllow, ",")), "comma-separated variables local shells inherit")
	fs.DurationVar(&cfg.ShellDefaultTimeout, "shell-timeout", 10*time.Minute, "default timeout of a Bash command")
	fs.DurationVar(&cfg.ShellMaxTimeout, "shell-max-timeout", time.Hour, "longest timeout a Bash command may ask for")
	fs.StringVar(&shellUser, "shell-user", os.Getenv("MINDROOM_SHELL_USER"), "NAME, UID, NAME:GROUP or UID:GID local shells and jobs run as when the primary runs as root without isolation (with it, each agent has its own user); default nobody:nogroup (env MINDROOM_SHELL_USER)")
	shellhost.BindIsolationFlags(fs, &cfg.Isolation)
	cfg.WorkerLiveness.BindFlags(fs)
	cfg.Connections.BindFlags(fs)
	fs.StringVar(&cfg.WorkspacesDir, "workspaces-dir", os.Getenv("MINDROOM_WORKSPACES_DIR"), "directory of the agents' workspaces, on a file system of their own if a full workspace must not fill the state directory's (default <state-dir>/workspaces; env MINDROOM_WORKSPACES_DIR)")
	fs.StringVar(&cfg.AgentEngine, "agent-engine", os.Getenv("MINDROOM_AGENT_ENGINE"), "engine of background agents: claude, codex, test, or command:<bash command> reading $MINDROOM_AGENT_TASK; empty refuses them (env MINDROOM_AGENT_ENGINE)")
	fs.DurationVar(&cfg.JobCommandCeiling, "job-ceiling", 60*time.Minute, "longest a background command may run")
	fs.DurationVar(&cfg.JobAgentCeiling, "agent-job-ceiling", 7*24*time.Hour, "longest a background agent may run")
	fs.DurationVar(&cfg.PromptWait, "prompt-wait", 280*time.Second, "longest request_approval and permission_prompt wait for a person")
	fs.DurationVar(&cfg.FastCallBudget, "fast-call-budget", response.DefaultFastCallBudget,
		"how long a tools.call's answer waits for the call to finish, so a fast tool needs one request (0: answer at once; at most 1s)")
	fs.DurationVar(&cfg.AgentReportGrace, "agent-report-grace", 5*time.Minute,
		"how long after start a worker may take to report a background agent before it is recorded interrupted")
	fs.IntVar(&cfg.MaxOpenResponses, "max-open-responses", response.DefaultMaxOpen, "most responses open at once on this primary")
	fs.IntVar(&cfg.MaxOpenResponsesPerCredential, "max-open-responses-per-credential", response.DefaultMaxOpenPerCredential, "most responses one runtime credential may hold open")
	fs.BoolVar(&cfg.WorkersOnly, "workers-only", os.Getenv("MINDROOM_WORKERS_ONLY") == "1", "refuse responses without a worker key, so no agent command or job runs on this host: for a primary whose shells would share its user and files, as in a container (env MINDROOM_WORKERS_ONLY=1)")
	fs.DurationVar(&cfg.ResponseReapEvery, "response-reap-every", response.DefaultReapEvery, "how often responses whose grant expired are closed")
	fs.BoolVar(&cfg.ActiveStandby, "active-standby", os.Getenv("MINDROOM_ACTIVE_STANDBY") == "1", "one of several primaries on one PostgreSQL store: serve only while holding the leader lease, stand by otherwise, exit when the lease is lost (env MINDROOM_ACTIVE_STANDBY=1)")
	fs.StringVar(&cfg.AdvertiseAddr, "advertise-addr", os.Getenv("MINDROOM_ADVERTISE_ADDR"), "gRPC address standbys name to clients while this primary leads (default: --grpc-listen's address) (env MINDROOM_ADVERTISE_ADDR)")
	fs.DurationVar(&cfg.LeaseTTL, "lease-ttl", leader.DefaultTTL, "how long the leader lease lasts unrenewed; a standby takes over this long after the leader stopped")
	fs.DurationVar(&cfg.LeaseRenew, "lease-renew", leader.DefaultRenew, "how often the leader renews its lease and a standby tries to take it")
	fs.StringVar(&logLevel, "log-level", env("MINDROOM_LOG_LEVEL", "info"), "debug, info, warn or error")
	fs.StringVar(&logFormat, "log-format", env("MINDROOM_LOG_FORMAT", logging.DefaultFormat), logging.FormatUsage+" (env MINDROOM_LOG_FORMAT)")
	fs.BoolVar(&showVersion, "version", false, "print the build (module version, revision, Go version) and exit")
	if err := cliflag.Parse(fs, args, stdout, stderr); err != nil {
		return cfg, false, err
	}
	if showVersion {
		return cfg, true, nil
	}
	if cfg.FastCallBudget == 0 {
		cfg.FastCallBudget = -1 // the flag's 0 is "answer at once"; the Config's zero is the default
	}
	if fs.NArg() > 0 {
		return cfg, false, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err := useShellUser(shellUser); err != nil {
		return cfg, false, err
	}
	cfg.RuntimeToken = os.Getenv("MINDROOM_RUNTIME_TOKEN")
	os.Unsetenv("MINDROOM_RUNTIME_TOKEN") // read once; nothing started later inherits it
	cfg.FirstAdminCredential = os.Getenv("MINDROOM_FIRST_ADMIN_CREDENTIAL")
	os.Unsetenv("MINDROOM_FIRST_ADMIN_CREDENTIAL")
	os.Unsetenv("TURNCLI_STORE_URL") // it may hold the database's password
	for _, name := range strings.Split(envAllow, ",") {
		if name = strings.TrimSpace(name); name != "" {
			cfg.ShellEnvAllow = append(cfg.ShellEnvAllow, name)
		}
	}
	for _, key := range strings.Split(workerKeys, ",") {
		if key = strings.TrimSpace(key); key != "" {
			cfg.WorkerKeys = append(cfg.WorkerKeys, key)
		}
	}
	logger, err := logging.New(stderr, logFormat, logLevel)
	if err != nil {
		return cfg, false, err
	}
	cfg.Logger = logger
	// Until the primary masks its credentials in what is logged (it routes the libraries
	// again then), nothing holds one.
	logging.RouteLibraries(logger)
	cfg.RouteLibraryLogs = true
	if cfg.AgentBinary == "" {
		cfg.AgentBinary, cfg.AgentArgs = defaultAgentBinary()
	}
	if mcpConfig != "" {
		servers, err := mcpbridge.LoadFile(mcpConfig)
		if err != nil {
			return cfg, false, err
		}
		cfg.MCPServers = servers
	}
	return cfg, false, nil
}

// useShellUser makes spec (when given) the user shells run as.
func useShellUser(spec string) error {
	if spec == "" {
		return shellpriv.Use(shellpriv.Default()) // nobody when root, no switch otherwise
	}
	u, err := shellpriv.Parse(spec)
	if err != nil {
		return err
	}
	return shellpriv.Use(u)
}

// defaultAgentBinary prefers a mindroom-agent installed next to this binary (a small, fast
// process); otherwise the launcher runs this binary's agent subcommand.
func defaultAgentBinary() (string, []string) {
	self, err := os.Executable()
	if err != nil {
		return "", nil
	}
	sibling := filepath.Join(filepath.Dir(self), "mindroom-agent")
	if fi, err := os.Stat(sibling); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
		return sibling, nil
	}
	return self, []string{"agent"}
}
