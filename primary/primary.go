package primary

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"os"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	"google.golang.org/grpc/test/bufconn"

	"github.com/turncli/turncli/internal/authlimit"
	"github.com/turncli/turncli/internal/logging"
	imetrics "github.com/turncli/turncli/internal/metrics"
	"github.com/turncli/turncli/internal/readiness"
	"github.com/turncli/turncli/internal/secretmask"
	"github.com/turncli/turncli/internal/shellhost"
	"github.com/turncli/turncli/internal/statedir"
	"github.com/turncli/turncli/primary/api/operator"
	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/continuation"
	"github.com/turncli/turncli/primary/credentials"
	"github.com/turncli/turncli/primary/events"
	"github.com/turncli/turncli/primary/interaction"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/lifecycle"
	"github.com/turncli/turncli/primary/listen"
	"github.com/turncli/turncli/primary/mcpbridge"
	"github.com/turncli/turncli/primary/metrics"
	"github.com/turncli/turncli/primary/operators"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/secrets"
	"github.com/turncli/turncli/primary/shellmode"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/threadfeed"
	"github.com/turncli/turncli/primary/toolhost"
	"github.com/turncli/turncli/primary/toolkits/shelltk"
	"github.com/turncli/turncli/primary/toolkits/testtk"
	"github.com/turncli/turncli/primary/workerhub"
)

// Listeners are where the primary serves (see package listen).
type Listeners = listen.Listeners

// Primary is an assembled primary, ready to Serve. Everything in it was built by New, in
// dependency order; nothing is set afterwards.
type Primary struct {
	cfg       Config
	lis       Listeners
	internals Internals
	// stops stops what New built: see New for the order and package lifecycle for the phases.
	stops *lifecycle.Stops

	runtimeToken string
	tokenFile    string
	operatorFile string // the first admin's credential, while that file exists
	workerFiles  map[string]string
	operatorAuth *operator.Authenticator // operator credentials: OperatorService and the REST edge
	// ready is the readiness of /readyz and of the gRPC health service; serving its
	// listeners' check, set once Serve serves them.
	ready   *readiness.Checker
	serving *readiness.Flag

	grpcServer   *grpc.Server // public APIs, role-authorised
	internalGRPC *bufconn.Listener
	cliHTTP      *http.Server // the loopback Agent CLI listener's
	apiHTTP      *http.Server // the REST API and dashboard listener's
	metricsHTTP  *http.Server // nil without a metrics listener
	chats        *chats       // the chat surfaces' loops, started by Serve
}

// Internals are the primary's engines, for tests and benchmarks that drive or inspect one
// directly. Nothing in production reaches an engine this way: people and programs use the
// APIs.
type Internals struct {
	Registry  *catalog.Registry
	Responses *response.Manager
	Shells    *shellhost.Runner
	// Isolation says how the local shells are kept apart, as the start line and /readyz say it.
	Isolation    shellhost.IsolationStatus
	Workers      *workerhub.Hub
	ToolHosts    *toolhost.Service
	TestToolkit  *testtk.Toolkit         // nil unless enabled
	TestDeferred *testtk.DeferredToolkit // nil unless enabled
	MCPServers   []*mcpbridge.Toolkit    // the mounted MCP servers, in configuration order

	Store         store.Store          // durable state (Config.StoreURL); closed last
	Continuations *continuation.Outbox // the runtime's outbox: Enqueue emits a continuation
	ThreadFeed    *threadfeed.Feed     // the thread feed people see and the relays of their decisions
	Jobs          *jobs.Manager        // background jobs, local and on workers
	Interaction   *interaction.Service // the interaction toolkit and approval decisions
	Events        *events.Bus          // the live feed people watch through the operator API
	// Secrets are the live secrets (credentials and grants), redacted from everything people
	// see and logs keep.
	Secrets *secrets.Registry
}

// Internals returns the primary's engines. It is for tests and benchmarks only.
func (p *Primary) Internals() Internals { return p.internals }

// New builds a primary: every component is constructed into a local variable with what it
// needs, in dependency order, and registers its stop as it is built; the Primary comes last.
// A failure names the step that failed and stops what was already built. It listens on
// nothing until Serve.
//
// The construction order is the shutdown order, reversed within each lifecycle phase: the
// store first (closed last), then the engines, the connections' hubs, readiness, the gRPC
// server and the APIs, and the HTTP servers last.
func New(ctx context.Context, cfg Config, lis Listeners) (_ *Primary, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if err := listen.RequireLoopback(lis.AgentCLI.Addr().String()); err != nil {
		return nil, fmt.Errorf("agent cli listener must be on loopback: %w", err)
	}
	if err := prepareStateDir(cfg.StateDir); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	// First, so that no log line, event or text of what follows shows a live secret.
	live := secrets.New()
	for _, v := range cfg.Interaction.AgentCredentials() {
		live.Add(v) // an engine's tools see it, and may put it in an approval or a prompt
	}
	cfg.Logger = slog.New(secrets.NewHandler(cfg.Logger.Handler(), live))
	log := cfg.Logger
	if cfg.RouteLibraryLogs {
		logging.RouteLibraries(log)
	}
	lis = cfg.Connections.limit(lis, log.With("component", "connections")).Secured()
	stops := &lifecycle.Stops{}
	defer func() {
		if err != nil { // what was built stops, as at a shutdown
			if stopErr := stops.Stop(context.WithoutCancel(ctx)); stopErr != nil {
				log.Error("stopping what was built failed", "err", stopErr)
			}
		}
	}()

	registry := catalog.NewRegistry()
	feed := events.NewRedacting(live.Redact)
	mets := metrics.New()
	failures, err := authlimit.New(authlimit.Config{Clock: cfg.Clock, Logger: log.With("component", "authlimit")})
	if err != nil {
		return nil, fmt.Errorf("credential failure limit: %w", err)
	}

	// The thread feed's bell is rung by the store after each commit that appended to the feed,
	// so it exists before the store; the feed that reads it is built with its engines.
	threadBell := threadfeed.NewBell()
	db, err := openStore(ctx, cfg, live, mets.ObserveTransaction, threadBell.Ring)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	stops.Add(lifecycle.State, "store", func(context.Context) error { return db.Close() })
	outbox := continuation.New(continuation.Config{Store: db, Logger: log.With("component", "continuations")})
	stops.Add(lifecycle.Intake, "continuation subscriptions", func(context.Context) error { outbox.Close(); return nil })
	operatorAuth, operatorFile, err := loadOperators(ctx, cfg, db, live)
	if err != nil {
		return nil, err
	}
	runtimeToken, tokenFile, err := credentials.Runtime(cfg.StateDir, cfg.RuntimeToken, live)
	if err != nil {
		return nil, fmt.Errorf("runtime credential: %w", err)
	}

	iso, isoStatus, err := cfg.Shells.Isolation.Build(cfg.StateDir)
	if err != nil {
		return nil, fmt.Errorf("isolation: %w", err)
	}
	if isoStatus.Isolated {
		log.Info("shells are isolated", "detail", isoStatus.Detail)
	} else {
		log.Warn("shells are not isolated", "detail", isoStatus.Detail)
	}
	shells, err := shellhost.New(shellhost.Config{
		Settings: cfg.Shells, StateDir: cfg.StateDir, Sandboxing: iso, AgentCLIURL: "http://" + lis.AgentCLI.Addr().String(),
	})
	if err != nil {
		return nil, fmt.Errorf("shells: %w", err)
	}
	// After the responses that run in them: each response releases its own sandbox.
	stops.Add(lifecycle.Work, "local shells", func(context.Context) error { shells.Close(); return nil })
	if err := registry.Register(ctx, shelltk.New(shelltk.Options{})); err != nil {
		return nil, fmt.Errorf("shell toolkit: %w", err)
	}
	workerCreds, workerFiles, err := credentials.LoadWorkers(cfg.StateDir, cfg.Workers.Credentials, live)
	if err != nil {
		return nil, fmt.Errorf("worker credentials: %w", err)
	}
	// The hub first: responses run their commands through it and jobs start through it. What
	// the hub needs of those two (the grant check, the job reports) goes to the WorkerService,
	// built with the APIs below.
	workers := workerhub.New(workerhub.Config{Credentials: workerCreds, Logger: log.With("component", "workers"), Liveness: cfg.Workers.Liveness})
	// Worker connections are long streams: they end before the gRPC server's graceful stop,
	// which would wait for them, and after the responses that release their commands on them.
	stops.Add(lifecycle.Connections, "worker connections", func(context.Context) error { workers.Close(); return nil })
	preflight := shellmode.New(shellmode.Config{Registry: registry, Local: shells, Workers: workers, Clock: cfg.Clock})
	responses := response.NewManager(response.Config{
		Settings: cfg.Responses,
		Registry: registry, Shells: shellRouter{local: shells, workers: workers}, Clock: cfg.Clock,
		Logger: log.With("component", "responses"), Secrets: live, Observer: mets, Tracing: cfg.Telemetry.TracerProvider(),
		CallApprovals: &response.CallApprovalConfig{
			Store: db, Notify: outbox.Notify, Events: feed, Logger: log.With("component", "callapprovals"),
		},
	})
	// Closing the responses revokes grants, stops their commands and ends their long polls, so
	// the requests still in flight finish at once instead of holding the servers' graceful
	// stops until their grace runs out.
	stops.Add(lifecycle.Work, "responses", func(context.Context) error { responses.CloseAll(); return nil })
	jobsManager, err := newJobs(cfg, db, workers, shells, outbox, feed, live)
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	// Before the responses close (built after them): no job is finished by the shutdown
	// itself; they run on and the next primary re-finds them.
	stops.Add(lifecycle.Work, "job supervision", func(context.Context) error { jobsManager.Close(); return nil })
	interactions, err := newInteraction(cfg, db, jobsManager, responses, shells, preflight, outbox, feed, live)
	if err != nil {
		return nil, fmt.Errorf("interaction: %w", err)
	}
	if err := registry.Register(ctx, interactions); err != nil {
		return nil, fmt.Errorf("interaction toolkit: %w", err)
	}
	threadFeed, err := threadfeed.New(threadfeed.Config{
		Store: db, Bell: threadBell, Redact: live.Redact, Background: interactions.Background, Prompts: interactions.Prompts,
		Questions: interactions.Questions, CallApprovals: responses.CallApprovals(), Clock: cfg.Clock,
		Modes:  shellmode.NewModes(db, preflight, log.With("component", "shellmodes")),
		Logger: log.With("component", "threadfeed"),
	})
	if err != nil {
		return nil, fmt.Errorf("thread feed: %w", err)
	}
	stops.Add(lifecycle.Intake, "thread feed subscriptions", func(context.Context) error { threadFeed.Close(); return nil })
	chats, err := buildChats(cfg, db, threadFeed, mets, live, stops, log.With("component", "chats"))
	if err != nil {
		return nil, err
	}
	var testToolkit *testtk.Toolkit
	var testDeferred *testtk.DeferredToolkit
	if cfg.EnableTestToolkit {
		testToolkit, testDeferred = testtk.New(), testtk.NewDeferred()
		for _, tk := range []catalog.Toolkit{testToolkit, testDeferred} {
			if err := registry.Register(ctx, tk); err != nil {
				return nil, fmt.Errorf("test toolkit: %w", err)
			}
		}
	}
	mcpServers, err := mountMCPServers(ctx, cfg, registry, live)
	// After the responses: no call is left running on the servers.
	stops.Add(lifecycle.Connections, "MCP servers", closeMCPServers(mcpServers))
	if err != nil {
		return nil, err
	}
	// After the built-in toolkits, so their names are reserved before any host connects.
	toolHosts, err := toolhost.New(toolhost.Config{Registry: registry, Logger: log.With("component", "toolhosts")})
	if err != nil {
		return nil, fmt.Errorf("tool hosts: %w", err)
	}
	// After the responses: their calls were cancelled while the hosts could hear it.
	stops.Add(lifecycle.Connections, "tool host streams", func(context.Context) error { toolHosts.Close(); return nil })

	// Readiness and metrics read the engines; the metrics listener is the first server built,
	// so it is the last to stop: it answers /readyz 503 while the others stop.
	healthServer := health.NewServer()
	serving := readiness.NewFlag("the listeners are not serving")
	ready := readiness.New(healthServer, serving.Check("listeners"), readiness.Check{Name: "store", Probe: func(ctx context.Context) error {
		_, err := db.PendingContinuations(ctx, math.MaxInt64, 1) // an indexed read that finds nothing
		return err
	}}, readiness.Check{Name: "disk", Probe: func(context.Context) error { return shells.CheckDisk() }})
	ready.Note("isolation", isoStatus.Detail)
	stops.Add(lifecycle.Unready, "readiness", func(context.Context) error { ready.Shutdown(); return nil })
	mcpSources := make([]metrics.MCPServer, len(mcpServers))
	for i, tk := range mcpServers {
		mcpSources[i] = tk
	}
	mets.Watch(metrics.Sources{Responses: responses, Workers: workers, Jobs: jobsManager, Store: db, MCPServers: mcpSources})
	conns, httpLog := cfg.Connections, log.With("component", "http")
	var metricsHTTP *http.Server
	if lis.Metrics != nil {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", imetrics.Handler(mets.Registry))
		ready.Handle(mux)
		metricsHTTP = conns.httpServer(mux, httpLog)
		stops.Add(lifecycle.Servers, "metrics listener", func(context.Context) error { return metricsHTTP.Close() })
	}

	apis, err := buildAPIs(apiDeps{
		cfg: cfg, store: db, secrets: live, metrics: mets, failures: failures, runtimeToken: runtimeToken,
		operatorAuth: operatorAuth, health: healthServer, preflight: preflight, responses: responses, workers: workers,
		jobs: jobsManager, interaction: interactions, toolHosts: toolHosts, continuations: outbox, threadFeed: threadFeed, links: chats.links, events: feed,
	})
	if err != nil {
		return nil, err
	}
	// Event watches are endless streams (REST ones too): they end before anything waits for
	// requests.
	stops.Add(lifecycle.Intake, "operator event watches", func(context.Context) error { apis.operator.Close(); return nil })
	stops.Add(lifecycle.Servers, "gRPC server", gracefulStop(apis.grpc, cfg.ShutdownGrace))
	internalGRPC := bufconn.Listen(1 << 20)
	gw, err := buildGateway(ctx, gatewayDeps{
		cfg: cfg, internal: internalGRPC, localAgentCLI: apis.localAgentCLI, responses: responses, failures: failures,
		ready: ready, policy: apis.policy, operatorAuth: operatorAuth, metrics: mets, slack: chats.slack, links: chats.linkPages,
	}, stops)
	if err != nil {
		return nil, err
	}
	cliHTTP := conns.httpServer(gw.agentCLI, httpLog)
	stops.Add(lifecycle.Servers, "Agent CLI listener", shutdownHTTP(cliHTTP, cfg.ShutdownGrace))
	apiHTTP := conns.httpServer(gw.rest, httpLog)
	stops.Add(lifecycle.Servers, "REST listener", shutdownHTTP(apiHTTP, cfg.ShutdownGrace))

	return &Primary{
		cfg: cfg, lis: lis, stops: stops,
		internals: Internals{
			Registry: registry, Responses: responses, Shells: shells, Isolation: isoStatus, Workers: workers,
			ToolHosts: toolHosts, TestToolkit: testToolkit, TestDeferred: testDeferred, MCPServers: mcpServers,
			Store: db, Continuations: outbox, ThreadFeed: threadFeed, Jobs: jobsManager, Interaction: interactions, Events: feed, Secrets: live,
		},
		runtimeToken: runtimeToken, tokenFile: tokenFile, operatorFile: operatorFile, workerFiles: workerFiles,
		operatorAuth: operatorAuth, ready: ready, serving: serving,
		grpcServer: apis.grpc, internalGRPC: internalGRPC, cliHTTP: cliHTTP, apiHTTP: apiHTTP, metricsHTTP: metricsHTTP,
		chats: chats,
	}, nil
}

// prepareStateDir creates the state directory, mode 0711: the shell user passes through to its
// workspace and agent_cli_bin/ but cannot list the directory; everything else in it is private
// (shellhost.New enforces that too).
func prepareStateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return err
	}
	return os.Chmod(dir, 0o711) // MkdirAll keeps an existing dir's mode
}

// loadOperators creates the first admin on a fresh store, and the operator authenticator. The
// first admin's credential file (adminFile) stays named in endpoints.json for as long as it
// exists.
func loadOperators(ctx context.Context, cfg Config, db store.Store, live *secrets.Registry) (_ *operator.Authenticator, adminFile string, _ error) {
	adminFile = operators.FirstAdminFile(cfg.StateDir)
	if _, err := operators.EnsureFirstAdmin(ctx, db, adminFile, cfg.FirstAdminCredential); err != nil {
		return nil, "", fmt.Errorf("first operator: %w", err)
	}
	if _, err := os.Stat(adminFile); err != nil {
		adminFile = ""
	}
	if cfg.FirstAdminCredential != "" {
		live.Add(cfg.FirstAdminCredential)
	}
	auth, err := operator.NewTrackingAuthenticator(ctx, db, live)
	if err != nil {
		return nil, "", fmt.Errorf("operators: %w", err)
	}
	return auth, adminFile, nil
}

// mountMCPServers registers the configured MCP servers as deferred toolkits: none starts
// before a describe or call needs it. On a failure it returns those mounted before it, to be
// closed.
func mountMCPServers(ctx context.Context, cfg Config, registry *catalog.Registry, live *secrets.Registry) ([]*mcpbridge.Toolkit, error) {
	var mounted []*mcpbridge.Toolkit
	for _, sc := range cfg.MCPServers {
		for k, v := range sc.Env { // a server's credentials, configured in clear
			if secretmask.Key(k) {
				live.Add(v)
			}
		}
		tk, err := mcpbridge.New(ctx, sc, mcpbridge.Options{Logger: cfg.Logger.With("component", "mcpbridge")})
		if err != nil {
			return mounted, fmt.Errorf("MCP server %q: %w", sc.Name, err)
		}
		mounted = append(mounted, tk)
		if err := registry.Register(ctx, tk); err != nil {
			return mounted, fmt.Errorf("MCP server %q: %w", sc.Name, err)
		}
	}
	return mounted, nil
}

// closeMCPServers stops the servers' processes, all at once.
func closeMCPServers(servers []*mcpbridge.Toolkit) lifecycle.Stop {
	return func(context.Context) error {
		var stopped sync.WaitGroup
		for _, tk := range servers {
			stopped.Go(func() { _ = tk.Close() })
		}
		stopped.Wait()
		return nil
	}
}

// RuntimeToken is the runtime credential (for in-process clients such as tests).
func (p *Primary) RuntimeToken() string { return p.runtimeToken }

// Endpoints describes where the primary serves, as written to endpoints.json.
type Endpoints = statedir.Endpoints

// Endpoints reports the primary's addresses.
func (p *Primary) Endpoints() Endpoints {
	var metricsURL string
	if p.lis.Metrics != nil {
		metricsURL = "http://" + p.lis.Metrics.Addr().String()
	}
	shells := p.internals.Shells
	return Endpoints{
		Metrics:           metricsURL,
		GRPC:              p.lis.GRPC.Addr().String(),
		HTTP:              p.lis.RESTScheme() + p.lis.HTTP.Addr().String(),
		AgentCLI:          "http://" + p.lis.AgentCLI.Addr().String(),
		RuntimeTokenFile:  p.tokenFile,
		OperatorTokenFile: p.operatorFile,
		WorkerTokenFiles:  p.workerFiles,
		AgentCLIBin:       shells.BinDir(),
		Workspaces:        shells.WorkspacesDir(),
		AgentBinary:       shells.AgentBinary(),
		Isolated:          shells.Isolated(),
		PID:               os.Getpid(),
	}
}
