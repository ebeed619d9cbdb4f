// Command mindroom-worker runs responses' Bash commands inside a sandbox for a primary it dials,
// and serves the sandbox proxy its shells call. --version prints the build.
//
// main is wiring only: flags (with environment fallbacks) → worker.Config → worker.Run.
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

	"google.golang.org/grpc/codes"

	"github.com/turncli/turncli/internal/buildinfo"
	"github.com/turncli/turncli/internal/cliflag"
	"github.com/turncli/turncli/internal/logging"
	"github.com/turncli/turncli/internal/procsec"
	"github.com/turncli/turncli/internal/telemetry"
	"github.com/turncli/turncli/worker"
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
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "version":
			fmt.Fprintln(stdout, buildinfo.Read().Line("mindroom-worker"))
			return 0
		case "help":
			if len(args) > 1 && args[1] != "help" && args[1] != "version" {
				_ = cliflag.UnknownCommand(stderr, "mindroom-worker", args[1], commands.Names())
				return 2
			}
			return run(ctx, []string{"--help"}, stdout, stderr)
		}
		_ = cliflag.UnknownCommand(stderr, "mindroom-worker", args[0], commands.Names())
		return 2
	}
	fs := flag.NewFlagSet("mindroom-worker", flag.ContinueOnError)
	fs.Usage = func() { printUsage(fs) }
	var cfg worker.Config
	var credentialFile, logLevel, logFormat string
	var showVersion bool
	hostname, _ := os.Hostname()
	fs.StringVar(&cfg.PrimaryAddr, "primary", env("MINDROOM_PRIMARY_ADDR", "127.0.0.1:7420"), "primary gRPC address, or a comma-separated list of active/standby primaries to follow the leader of (env MINDROOM_PRIMARY_ADDR)")
	fs.StringVar(&cfg.TLSCAFile, "tls-ca", os.Getenv("MINDROOM_PRIMARY_TLS_CA"), "CA bundle to verify the primary with; empty: no TLS (env MINDROOM_PRIMARY_TLS_CA)")
	fs.BoolVar(&cfg.Insecure, "insecure", os.Getenv("MINDROOM_WORKER_INSECURE") == "1", "allow a plaintext connection to a primary that is not on loopback (env MINDROOM_WORKER_INSECURE=1)")
	fs.StringVar(&credentialFile, "credential-file", os.Getenv("MINDROOM_WORKER_CREDENTIAL_FILE"), "file holding this worker key's credential (env MINDROOM_WORKER_CREDENTIAL_FILE, or the credential itself in MINDROOM_WORKER_CREDENTIAL)")
	fs.StringVar(&cfg.Key, "key", os.Getenv("MINDROOM_WORKER_KEY"), "worker key responses are routed by (env MINDROOM_WORKER_KEY)")
	fs.StringVar(&cfg.ID, "id", env("MINDROOM_WORKER_ID", hostname), "this worker's stable id (env MINDROOM_WORKER_ID, default the hostname)")
	fs.IntVar(&cfg.Capacity, "capacity", 0, "commands run at once; 0 for no limit")
	fs.StringVar(&cfg.StateDir, "state-dir", env("MINDROOM_STATE_DIR", ".turncli-worker"), "state directory: agent_cli_bin/ and workspaces/ (env MINDROOM_STATE_DIR)")
	fs.StringVar(&cfg.ProxyListen, "proxy-listen", env("MINDROOM_PROXY_LISTEN", "127.0.0.1:0"), "sandbox proxy loopback address (env MINDROOM_PROXY_LISTEN)")
	fs.StringVar(&cfg.MetricsListen, "metrics-listen", os.Getenv("MINDROOM_METRICS_LISTEN"), "Prometheus /metrics, /healthz and /readyz address; port 0 picks one; empty: none (env MINDROOM_METRICS_LISTEN)")
	cfg.Shells.BindFlags(fs)
	cfg.Connections.BindFlags(fs)
	fs.StringVar(&logLevel, "log-level", env("MINDROOM_LOG_LEVEL", "info"), "debug, info, warn or error")
	fs.StringVar(&logFormat, "log-format", env("MINDROOM_LOG_FORMAT", logging.DefaultFormat), logging.FormatUsage+" (env MINDROOM_LOG_FORMAT)")
	fs.BoolVar(&showVersion, "version", false, "print the build (module version, revision, Go version) and exit")
	if err := cliflag.Parse(fs, args, stdout, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if showVersion {
		fmt.Fprintln(stdout, buildinfo.Read().Line("mindroom-worker"))
		return 0
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mindroom-worker: unexpected argument %q\nrun mindroom-worker --help for all flags\n", fs.Arg(0))
		return 2
	}
	cfg.Credential = os.Getenv("MINDROOM_WORKER_CREDENTIAL")
	// Read once: nothing this process starts later inherits it. Its initial environment stays
	// in /proc/<pid>/environ, which a non-dumpable process keeps from anyone without
	// CAP_SYS_PTRACE, which shells never have.
	os.Unsetenv("MINDROOM_WORKER_CREDENTIAL")
	if credentialFile != "" {
		data, err := os.ReadFile(credentialFile)
		if err != nil {
			fmt.Fprintln(stderr, "mindroom-worker: credential:", err)
			return 2
		}
		cfg.Credential = strings.TrimSpace(string(data))
		if cfg.Credential == "" {
			fmt.Fprintf(stderr, "mindroom-worker: the credential file %s is empty\n", credentialFile)
			return 2
		}
	}
	if cfg.Credential == "" {
		fmt.Fprint(stderr, noCredential)
		return 2
	}
	if cfg.Shells.AgentBinary == "" {
		if self, err := os.Executable(); err == nil {
			cfg.Shells.AgentBinary = filepath.Join(filepath.Dir(self), "mindroom-agent")
		}
	}
	// A bad shell user or bound is a mistake in the flags: said here, before anything starts.
	if err := cfg.Shells.Validate(); err != nil {
		fmt.Fprintln(stderr, "mindroom-worker:", err)
		return 2
	}
	logger, err := logging.New(stderr, logFormat, logLevel)
	if err != nil {
		fmt.Fprintln(stderr, "mindroom-worker:", err)
		return 2
	}
	cfg.Logger = logger
	logging.RouteLibraries(logger)
	tel, err := telemetry.FromEnv(ctx, "mindroom-worker")
	if err != nil {
		fmt.Fprintln(stderr, "mindroom-worker:", err)
		return 2
	}
	cfg.Telemetry = tel
	defer telemetry.ShutdownWithin(tel, cfg.Logger, 5*time.Second)
	if err := worker.Run(ctx, cfg); err != nil {
		var refused *worker.RefusedError
		if errors.As(err, &refused) {
			cfg.Logger.Error("the primary refused this worker", "code", refused.Code.String(), "reason", refused.Message, "check", refusalHint(refused))
			return 2
		}
		cfg.Logger.Error("worker failed", "err", err)
		return 1
	}
	return 0
}

// noCredential is what a worker started without a credential says: where to give it, and where
// a primary keeps the ones it issues.
const noCredential = `mindroom-worker: no worker credential: give --credential-file FILE, or set
MINDROOM_WORKER_CREDENTIAL_FILE to a file holding it, or MINDROOM_WORKER_CREDENTIAL to the
credential itself. A primary started with --worker-keys KEY writes one for KEY into
<its state dir>/credentials/workers/KEY.token (make run-worker reads .turncli's).
`

// refusalHint names the flags and variables to check when the primary refuses the worker.
func refusalHint(e *worker.RefusedError) string {
	switch e.Code {
	case codes.Unauthenticated:
		return "the worker credential: --credential-file (MINDROOM_WORKER_CREDENTIAL_FILE) or MINDROOM_WORKER_CREDENTIAL must hold a credential the primary issued, and --id (MINDROOM_WORKER_ID) must be set"
	case codes.PermissionDenied:
		return "--key (MINDROOM_WORKER_KEY): the credential from --credential-file (MINDROOM_WORKER_CREDENTIAL_FILE) or MINDROOM_WORKER_CREDENTIAL is another worker key's"
	default:
		return "--id (MINDROOM_WORKER_ID) and --proxy-listen (MINDROOM_PROXY_LISTEN)"
	}
}
