package primary

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/encoding/protojson"

	agentcliv1 "github.com/turncli/turncli/gen/turncli/agentcli/v1"
	continuationv1 "github.com/turncli/turncli/gen/turncli/continuation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/agentclihttp"
	"github.com/turncli/turncli/internal/authlimit"
	"github.com/turncli/turncli/internal/buildinfo"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/logging"
	imetrics "github.com/turncli/turncli/internal/metrics"
	"github.com/turncli/turncli/internal/readiness"
	"github.com/turncli/turncli/internal/secretmask"
	"github.com/turncli/turncli/internal/shellhost"
	"github.com/turncli/turncli/internal/statedir"
	"github.com/turncli/turncli/internal/telemetry"
	"github.com/turncli/turncli/primary/api/dashboard"
	"github.com/turncli/turncli/primary/api/operator"
	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/continuation"
	"github.com/turncli/turncli/primary/credentials"
	"github.com/turncli/turncli/primary/events"
	"github.com/turncli/turncli/primary/interaction"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/listen"
	"github.com/turncli/turncli/primary/mcpbridge"
	"github.com/turncli/turncli/primary/metrics"
	"github.com/turncli/turncli/primary/operators"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/roleauth"
	"github.com/turncli/turncli/primary/secrets"
	"github.com/turncli/turncli/primary/shellmode"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/toolhost"
	"github.com/turncli/turncli/primary/toolkits/shelltk"
	"github.com/turncli/turncli/primary/toolkits/testtk"
	"github.com/turncli/turncli/primary/workerhub"
)

// Listeners are where the primary serves (see package listen).
type Listeners = listen.Listeners

// Primary is an assembled primary, ready to Serve.
type Primary struct {
	cfg       Config
	lis       Listeners
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
	Jobs          *jobs.Manager        // background jobs, local and on workers
	Interaction   *interaction.Service // the interaction toolkit and approval decisions
	Events        *events.Bus          // the live feed people watch through the operator API
	// Secrets are the live secrets (credentials and grants), redacted from everything people
	// see and logs keep.
	Secrets *secrets.Registry

	runtimeToken string
	tokenFile    string
	operatorFile string                  // the first admin's credential, while that file exists
	operatorAuth *operator.Authenticator // operator credentials: OperatorService and the REST edge
	operatorAPI  *operator.Server        // OperatorService; Close ends its event watches
	// preflight is the one check of the minimal shell mode, whether an operator stores it, a
	// runtime asks for it when it opens a response or a background agent starts in it.
	preflight   *shellmode.Preflight
	workerFiles map[string]string
	// failures counts refused credentials per remote address, at every door that takes one:
	// the gRPC authenticators, the REST edge and the dashboard's sign-in.
	failures *authlimit.Limiter

	grpcServer *grpc.Server // public APIs, role-authorised
	health     *health.Server
	metrics    *metrics.Metrics
	// ready is the readiness of /readyz and of the gRPC health service; serving its
	// listeners' check, set once Serve serves them.
	ready        *readiness.Checker
	serving      *readiness.Flag
	policy       *roleauth.Policy
	internalGRPC *bufconn.Listener
	// localAgentCLI is the Agent CLI handlers as the loopback listener's gateway calls them, in
	// this process, every request marked as arriving on the primary's local path.
	localAgentCLI agentcliv1.AgentCLIServiceServer
}

// New builds a primary: every engine is constructed with what it needs, in dependency order,
// and nothing is wired afterwards. A failure names the step that failed. It listens on nothing
// until Serve.
func New(ctx context.Context, cfg Config, lis Listeners) (_ *Primary, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if err := requireLoopback(lis.AgentCLI.Addr().String()); err != nil {
		return nil, fmt.Errorf("agent cli listener must be on loopback: %w", err)
	}
	if err := prepareStateDir(cfg.StateDir); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	// First, so that no log line, event or text of what follows shows a live secret.
	live := secrets.New()
	cfg.Logger = slog.New(secrets.NewHandler(cfg.Logger.Handler(), live))
	if cfg.RouteLibraryLogs {
		logging.RouteLibraries(cfg.Logger)
	}
	lis = cfg.Connections.limit(lis, cfg.Logger.With("component", "connections")).Secured()
	p := &Primary{cfg: cfg, lis: lis, Registry: catalog.NewRegistry(), Events: events.NewRedacting(live.Redact), Secrets: live,
		metrics: metrics.New(), serving: readiness.NewFlag("the listeners are not serving")}
	if p.failures, err = authlimit.New(authlimit.Config{Clock: cfg.Clock, Logger: cfg.Logger.With("component", "authlimit")}); err != nil {
		return nil, fmt.Errorf("credential failure limit: %w", err)
	}

	db, err := openStore(ctx, cfg, live, p.metrics.ObserveTransaction)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	p.Store = db
	defer func() {
		if err != nil { // nothing else will close them
			if p.Jobs != nil {
				p.Jobs.Close()
			}
			db.Close()
		}
	}()
	p.Continuations = continuation.New(continuation.Config{Store: db, Logger: cfg.Logger.With("component", "continuations")})
	if err := p.loadOperators(ctx); err != nil {
		return nil, err
	}
	if p.runtimeToken, p.tokenFile, err = credentials.Runtime(cfg.StateDir, cfg.RuntimeToken, live); err != nil {
		return nil, fmt.Errorf("runtime credential: %w", err)
	}

	iso, isoStatus, err := cfg.Isolation.Build(cfg.StateDir)
	if err != nil {
		return nil, fmt.Errorf("isolation: %w", err)
	}
	p.Isolation = isoStatus
	if isoStatus.Isolated {
		cfg.Logger.Info("shells are isolated", "detail", isoStatus.Detail)
	} else {
		cfg.Logger.Warn("shells are not isolated", "detail", isoStatus.Detail)
	}
	if p.Shells, err = shellhost.New(shellhost.Config{
		StateDir:       cfg.StateDir,
		WorkspacesDir:  cfg.WorkspacesDir,
		Isolation:      iso,
		AgentCLIURL:    "http://" + lis.AgentCLI.Addr().String(),
		AgentBinary:    cfg.AgentBinary,
		AgentArgs:      cfg.AgentArgs,
		EnvAllow:       cfg.ShellEnvAllow,
		DefaultTimeout: cfg.ShellDefaultTimeout,
		MaxTimeout:     cfg.ShellMaxTimeout,
		Grace:          cfg.ShellGrace,
	}); err != nil {
		return nil, fmt.Errorf("shells: %w", err)
	}
	if err := p.Registry.Register(ctx, shelltk.New(shelltk.Options{})); err != nil {
		return nil, fmt.Errorf("shell toolkit: %w", err)
	}
	workerCreds, workerFiles, err := credentials.LoadWorkers(cfg.StateDir, credentials.Workers{
		Keys: cfg.WorkerKeys, Dir: cfg.WorkerCredentialsDir, Configured: cfg.WorkerCredentials,
	}, live)
	p.workerFiles = workerFiles
	if err != nil {
		return nil, fmt.Errorf("worker credentials: %w", err)
	}
	// The hub first: responses run their commands through it and jobs start through it. What
	// the hub needs of those two (the grant check, the job reports) goes to the WorkerService,
	// built with the APIs below.
	p.Workers = workerhub.New(workerhub.Config{Credentials: workerCreds, Logger: cfg.Logger.With("component", "workers"), Liveness: cfg.WorkerLiveness})
	p.preflight = shellmode.New(shellmode.Config{Registry: p.Registry, Local: p.Shells, Workers: p.Workers})
	p.Responses = response.NewManager(response.Config{
		Registry: p.Registry, Shells: shellRouter{local: p.Shells, workers: p.Workers}, Clock: cfg.Clock,
		Logger:         cfg.Logger.With("component", "responses"),
		FastCallBudget: fastCallBudget(cfg.FastCallBudget),
		Secrets:        live,
		MaxOpen:        cfg.MaxOpenResponses, MaxOpenPerCredential: cfg.MaxOpenResponsesPerCredential, WorkersOnly: cfg.WorkersOnly,
		Observer: p.metrics, Tracing: cfg.Telemetry.TracerProvider(),
		CallApprovals: &response.CallApprovalConfig{
			Store: db, Notify: p.Continuations.Notify, Events: p.Events, Logger: cfg.Logger.With("component", "callapprovals"),
		},
	})
	if p.Jobs, err = p.newJobs(); err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	if p.Interaction, err = p.newInteraction(); err != nil {
		return nil, fmt.Errorf("interaction: %w", err)
	}
	if err := p.Registry.Register(ctx, p.Interaction); err != nil {
		return nil, fmt.Errorf("interaction toolkit: %w", err)
	}
	if cfg.EnableTestToolkit {
		p.TestToolkit, p.TestDeferred = testtk.New(), testtk.NewDeferred()
		for _, tk := range []catalog.Toolkit{p.TestToolkit, p.TestDeferred} {
			if err := p.Registry.Register(ctx, tk); err != nil {
				return nil, fmt.Errorf("test toolkit: %w", err)
			}
		}
	}
	if err := p.mountMCPServers(ctx); err != nil {
		return nil, err
	}
	// After the built-in toolkits, so their names are reserved before any host connects.
	if p.ToolHosts, err = toolhost.New(toolhost.Config{Registry: p.Registry, Logger: cfg.Logger.With("component", "toolhosts")}); err != nil {
		return nil, fmt.Errorf("tool hosts: %w", err)
	}
	if err := p.buildAPIs(); err != nil {
		return nil, err
	}
	p.watch()
	return p, nil
}

// watch registers the collectors that read the engines at every scrape, and the readiness
// checks: the store answering a read, and the listeners serving.
func (p *Primary) watch() {
	mcp := make([]metrics.MCPServer, len(p.MCPServers))
	for i, tk := range p.MCPServers {
		mcp[i] = tk
	}
	p.metrics.Watch(metrics.Sources{Responses: p.Responses, Workers: p.Workers, Jobs: p.Jobs, Store: p.Store, MCPServers: mcp})
	p.ready = readiness.New(p.health, p.serving.Check("listeners"), readiness.Check{Name: "store", Probe: func(ctx context.Context) error {
		_, err := p.Store.PendingContinuations(ctx, math.MaxInt64, 1) // an indexed read that finds nothing
		return err
	}}, readiness.Check{Name: "disk", Probe: func(context.Context) error { return p.Shells.CheckDisk() }})
	p.ready.Note("isolation", p.Isolation.Detail)
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
// first admin's credential file stays named in endpoints.json for as long as it exists.
func (p *Primary) loadOperators(ctx context.Context) error {
	adminFile := operators.FirstAdminFile(p.cfg.StateDir)
	if _, err := operators.EnsureFirstAdmin(ctx, p.Store, adminFile, p.cfg.FirstAdminCredential); err != nil {
		return fmt.Errorf("first operator: %w", err)
	}
	if _, err := os.Stat(adminFile); err == nil {
		p.operatorFile = adminFile
	}
	if p.cfg.FirstAdminCredential != "" {
		p.Secrets.Add(p.cfg.FirstAdminCredential)
	}
	auth, err := operator.NewTrackingAuthenticator(ctx, p.Store, p.Secrets)
	if err != nil {
		return fmt.Errorf("operators: %w", err)
	}
	p.operatorAuth = auth
	return nil
}

// mountMCPServers registers the configured MCP servers as deferred toolkits: none starts
// before a describe or call needs it, so a failure here leaves nothing running.
func (p *Primary) mountMCPServers(ctx context.Context) error {
	for _, sc := range p.cfg.MCPServers {
		for k, v := range sc.Env { // a server's credentials, configured in clear
			if secretmask.Key(k) {
				p.Secrets.Add(v)
			}
		}
		tk, err := mcpbridge.New(ctx, sc, mcpbridge.Options{Logger: p.cfg.Logger.With("component", "mcpbridge")})
		if err == nil {
			err = p.Registry.Register(ctx, tk)
		}
		if err != nil {
			return fmt.Errorf("MCP server %q: %w", sc.Name, err)
		}
		p.MCPServers = append(p.MCPServers, tk)
	}
	return nil
}

// redactedServices are the services whose responses are redacted of live secrets: people read
// them (the operator API, and continuations, which are posted to conversations).
var redactedServices = []string{
	operatorv1.OperatorService_ServiceDesc.ServiceName,
	continuationv1.ContinuationService_ServiceDesc.ServiceName,
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
	return Endpoints{
		Metrics:           metricsURL,
		GRPC:              p.lis.GRPC.Addr().String(),
		HTTP:              p.lis.RESTScheme() + p.lis.HTTP.Addr().String(),
		AgentCLI:          "http://" + p.lis.AgentCLI.Addr().String(),
		RuntimeTokenFile:  p.tokenFile,
		OperatorTokenFile: p.operatorFile,
		WorkerTokenFiles:  p.workerFiles,
		AgentCLIBin:       p.Shells.BinDir(),
		Workspaces:        p.Shells.WorkspacesDir(),
		AgentBinary:       p.Shells.AgentBinary(),
		Isolated:          p.Shells.Isolated(),
		PID:               os.Getpid(),
	}
}

func dialInternal(l *bufconn.Listener) (*grpc.ClientConn, error) {
	return grpc.NewClient("passthrough:///internal",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return l.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
	)
}

// Serve serves every API until ctx ends, then shuts down in order: end continuation
// subscriptions, stop taking HTTP requests, close every response (revoking grants and stopping
// commands), stop the gRPC servers gracefully with a hard stop as backstop, close the store.
func (p *Primary) Serve(ctx context.Context) error {
	if err := p.recoverJobs(ctx); err != nil {
		return err
	}
	apiConn, err := dialInternal(p.internalGRPC)
	if err != nil {
		return err
	}
	defer apiConn.Close()

	cliHandler, err := agentclihttp.NewServerHandler(ctx, p.localAgentCLI, func(_ context.Context, token string) bool {
		_, ok := p.Responses.Authenticate(token, response.LocalPath)
		return ok
	}, agentclihttp.Faults{Log: p.cfg.Logger.With("component", "agentcli"), Owner: fault.PrimaryLog})
	if err != nil {
		return err
	}
	// REST clients of the runtime API get snake_case JSON, the proto field names.
	// HttpBody responses (a job's log) go out as their raw bytes.
	apiMux := runtime.NewServeMux(runtime.WithErrorHandler(restErrors(p.cfg.Logger.With("component", "rest"))), runtime.WithMarshalerOption(runtime.MIMEWildcard, &runtime.HTTPBodyMarshaler{
		Marshaler: &runtime.JSONPb{
			MarshalOptions:   protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true},
			UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: false},
		},
	}), runtime.WithMiddlewares(imetrics.GatewayRoutes()), runtime.WithIncomingHeaderMatcher(traceHeaders))
	if err := responsev1.RegisterResponseServiceHandler(ctx, apiMux, apiConn); err != nil {
		return err
	}
	if err := continuationv1.RegisterContinuationServiceHandler(ctx, apiMux, apiConn); err != nil {
		return err
	}
	if err := operatorv1.RegisterOperatorServiceHandler(ctx, apiMux, apiConn); err != nil {
		return err
	}
	// The dashboard shares the REST listener (same origin as the operator API) but not its
	// edge: it authenticates by its own session, then calls OperatorService over apiConn with
	// the signed-in operator's credential, so the server decides exactly as for curl.
	dash, err := dashboard.New(dashboard.Config{Operator: operatorv1.NewOperatorServiceClient(apiConn), Failures: p.failures,
		Now: p.cfg.Clock.Now, Logger: p.cfg.Logger.With("component", "dashboard")})
	if err != nil {
		return err
	}
	// A removed operator's sessions end, with their event streams, as soon as the
	// authenticator reads the removal: at the next call, or at the watch's next look.
	defer p.operatorAuth.OnRevoked(dash.EndSessions)()
	// Not a ServeMux: that would clean and redirect the API's paths, which reach the gateway
	// exactly as sent.
	dashHandler, edge := dash.Handler(), p.restEdge(apiMux)
	restMux := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			// A person who opens the REST address in a browser wants the dashboard; no API
			// lives at the root, so nothing else is taken from anyone.
			http.Redirect(w, r, dashboard.Prefix, http.StatusFound)
			return
		}
		if strings.HasPrefix(r.URL.Path, dashboard.Prefix) {
			dashHandler.ServeHTTP(w, r)
			return
		}
		edge.ServeHTTP(w, r)
	})
	// A local shell's calls reach the engine straight from its loopback: the call's dispatch
	// span, a child of the shell's Bash span, is the primary's record of it, so the listener
	// only continues the trace and spends no span of its own per request.
	cliHandler = telemetry.ContinueHTTP(cliHandler)
	conns, httpLog := p.cfg.Connections, p.cfg.Logger.With("component", "http")
	cliHTTP := conns.httpServer(p.metrics.HTTP.Static("agent_cli", agentclihttp.Route, cliHandler), httpLog)
	apiHTTP := conns.httpServer(p.metrics.HTTP.Routed("api", restMux), httpLog)
	// The metrics listener outlives the others: it answers /readyz with 503 while they stop.
	var metricsHTTP *http.Server
	if p.lis.Metrics != nil {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", imetrics.Handler(p.metrics.Registry))
		p.ready.Handle(mux)
		metricsHTTP = conns.httpServer(mux, httpLog)
	}

	g, gctx := errgroup.WithContext(ctx)
	serveGRPC := func(s *grpc.Server, l net.Listener) func() error {
		return func() error {
			if err := s.Serve(l); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
				return err
			}
			return nil
		}
	}
	serveHTTP := func(s *http.Server, l net.Listener) func() error {
		return func() error {
			if err := s.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		}
	}
	g.Go(serveGRPC(p.grpcServer, p.lis.GRPC))
	g.Go(serveGRPC(p.grpcServer, p.internalGRPC))
	g.Go(serveHTTP(cliHTTP, p.lis.AgentCLI))
	g.Go(serveHTTP(apiHTTP, p.lis.HTTP))
	if metricsHTTP != nil {
		g.Go(serveHTTP(metricsHTTP, p.lis.Metrics))
	}
	g.Go(func() error {
		p.Responses.RunReaper(gctx, p.cfg.ResponseReapEvery)
		return nil
	})
	g.Go(func() error {
		p.ready.Run(gctx, readinessRefresh)
		return nil
	})
	g.Go(func() error {
		p.operatorAuth.Watch(gctx, p.cfg.Clock, operatorsRecheck)
		return nil
	})
	g.Go(func() error {
		<-gctx.Done()
		p.shutdown(cliHTTP, apiHTTP)
		if metricsHTTP != nil {
			_ = metricsHTTP.Close()
		}
		p.cfg.Logger.Info("primary stopped")
		return nil
	})
	p.serving.Set()
	p.ready.Refresh(ctx)
	ep := p.Endpoints()
	attrs := append([]any{"grpc", p.lis.GRPC.Addr().String(), "http", p.lis.HTTP.Addr().String(),
		"agent_cli", p.lis.AgentCLI.Addr().String(), "dashboard", ep.HTTP + "/ui/"}, buildinfo.Read().LogAttrs()...)
	if ep.OperatorTokenFile != "" {
		attrs = append(attrs, "admin_credential_file", ep.OperatorTokenFile)
	}
	if p.lis.Metrics != nil {
		attrs = append(attrs, "metrics", p.lis.Metrics.Addr().String())
	}
	p.cfg.Logger.Info("primary serving", attrs...)
	if p.cfg.OnServing != nil {
		p.cfg.OnServing(ep)
	}
	return g.Wait()
}

// traceHeaders forwards a REST request's W3C trace context to the gRPC server behind the
// gateway, as metadata its stats handler continues, besides the gateway's default headers.
func traceHeaders(key string) (string, bool) {
	switch k := strings.ToLower(key); k {
	case telemetry.TraceparentKey, telemetry.TracestateKey:
		return k, true
	}
	return runtime.DefaultHeaderMatcher(key)
}

// readinessRefresh is how often the readiness checks run by themselves, so the gRPC health
// status follows them when nobody asks /readyz.
const readinessRefresh = 5 * time.Second

// operatorsRecheck is how often the operators are looked at for a removal nobody's call has
// noticed (`mindroom-primary operators remove` in another process), so that the removed
// operator's dashboard sessions end within it. A look loads the store's stamp from shared
// memory (PostgreSQL: reads the few operator rows).
const operatorsRecheck = time.Second

func (p *Primary) shutdown(servers ...*http.Server) {
	// Not ready first (/readyz 503, gRPC health NOT_SERVING), so load balancers and workers
	// look elsewhere.
	p.ready.Shutdown()
	// Subscriptions (REST ones too) are endless streams: end them before waiting for requests.
	p.Continuations.Close()
	p.operatorAPI.Close() // event watches are endless streams too (REST ones as well)
	// Jobs stop being supervised before responses close, so no job is finished by the
	// shutdown itself; they run on and the next primary re-finds them.
	p.Jobs.Close()
	// Responses next: closing them revokes grants, stops their commands and ends their long
	// polls, so the HTTP and gRPC requests still in flight finish at once instead of holding
	// the graceful stops below until their grace runs out.
	p.Responses.CloseAll()
	p.Shells.Close() // each response released its own sandbox; none is left running
	httpCtx, cancelHTTP := context.WithTimeout(context.Background(), p.cfg.ShutdownGrace)
	defer cancelHTTP()
	for _, s := range servers {
		_ = s.Shutdown(httpCtx)
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), p.cfg.ShutdownGrace)
	defer cancel()
	p.Workers.Close()             // worker connections are long streams: end them, or GracefulStop waits
	var mcpStopped sync.WaitGroup // after responses: no call is left running on the servers
	for _, tk := range p.MCPServers {
		mcpStopped.Go(func() { _ = tk.Close() })
	}
	mcpStopped.Wait()
	p.ToolHosts.Close() // after responses: their calls were cancelled while hosts could hear it
	done := make(chan struct{})
	go func() { p.grpcServer.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-stopCtx.Done():
		p.grpcServer.Stop()
		<-done
	}
	for _, s := range servers {
		_ = s.Close()
	}
	if err := p.Store.Close(); err != nil { // last: every server that could write has stopped
		p.cfg.Logger.Error("store close failed", "err", err)
	}
}
