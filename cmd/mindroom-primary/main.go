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
	"github.com/turncli/turncli/internal/statedir"
	"github.com/turncli/turncli/internal/telemetry"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/mcpbridge"
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

// parseFlags returns the primary's Config, its Logger writing to stderr, and whether --version
// was asked for. --help prints the usage on stdout. Each section of the Config binds its own
// flags, with its own defaults (primary.Config.BindFlags).
func parseFlags(args []string, stdout, stderr io.Writer) (primary.Config, bool, error) {
	fs := flag.NewFlagSet("mindroom-primary", flag.ContinueOnError)
	fs.Usage = func() { printUsage(fs) }
	var cfg primary.Config
	cfg.BindFlags(fs)
	var logLevel, logFormat, mcpConfig string
	var showVersion bool
	fs.StringVar(&mcpConfig, "mcp-config", os.Getenv("MINDROOM_MCP_CONFIG"), `JSON file of MCP servers to mount as toolkits, {"servers":[…]} (env MINDROOM_MCP_CONFIG)`)
	fs.StringVar(&logLevel, "log-level", cliflag.Env("MINDROOM_LOG_LEVEL", logging.DefaultLevel), "debug, info, warn or error")
	fs.StringVar(&logFormat, "log-format", cliflag.Env("MINDROOM_LOG_FORMAT", logging.DefaultFormat), logging.FormatUsage+" (env MINDROOM_LOG_FORMAT)")
	fs.BoolVar(&showVersion, "version", false, "print the build (module version, revision, Go version) and exit")
	if err := cliflag.Parse(fs, args, stdout, stderr); err != nil {
		return cfg, false, err
	}
	if showVersion {
		return cfg, true, nil
	}
	if fs.NArg() > 0 {
		return cfg, false, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	cfg.RuntimeToken = os.Getenv("MINDROOM_RUNTIME_TOKEN")
	os.Unsetenv("MINDROOM_RUNTIME_TOKEN") // read once; nothing started later inherits it
	cfg.FirstAdminCredential = os.Getenv("MINDROOM_FIRST_ADMIN_CREDENTIAL")
	os.Unsetenv("MINDROOM_FIRST_ADMIN_CREDENTIAL")
	cfg.Matrix.AccessToken = os.Getenv("MINDROOM_MATRIX_ACCESS_TOKEN")
	os.Unsetenv("MINDROOM_MATRIX_ACCESS_TOKEN")
	cfg.Slack.BotToken = os.Getenv("MINDROOM_SLACK_BOT_TOKEN")
	os.Unsetenv("MINDROOM_SLACK_BOT_TOKEN")
	cfg.Slack.SigningSecret = os.Getenv("MINDROOM_SLACK_SIGNING_SECRET")
	os.Unsetenv("MINDROOM_SLACK_SIGNING_SECRET")
	os.Unsetenv("TURNCLI_STORE_URL") // it may hold the database's password
	logger, err := logging.New(stderr, logFormat, logLevel)
	if err != nil {
		return cfg, false, err
	}
	cfg.Logger = logger
	// Until the primary masks its credentials in what is logged (it routes the libraries
	// again then), nothing holds one.
	logging.RouteLibraries(logger)
	cfg.RouteLibraryLogs = true
	if cfg.Shells.AgentBinary == "" {
		cfg.Shells.AgentBinary, cfg.Shells.AgentArgs = defaultAgentBinary()
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
