package response

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"github.com/turncli/turncli/internal/bashexec"
	"github.com/turncli/turncli/internal/clock"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/telemetry"
	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/grant"
)

// ShellLauncher runs a response's Bash commands where the response's shells live (the primary
// host, or a worker of its key).
type ShellLauncher interface {
	// Run runs one command and blocks until it exits. A non-zero exit is a result; an error
	// means it could not run, or its worker went away while it ran. The launcher adds
	// MINDROOM_AGENT_CLI_URL to cmd.AgentCLIEnv for the place it runs the command.
	Run(ctx context.Context, cmd ShellCommand, out bashexec.Output) (bashexec.Result, error)
	// AgentCLIURL is the MINDROOM_AGENT_CLI_URL for shells of a response with this worker key
	// and binding, binding a worker first if the response has none.
	AgentCLIURL(workerKey string, b *Binding) (string, error)
	// Release ends the sandbox the response's commands ran in, where they ran, once the
	// response has closed and its commands have exited.
	Release(workerKey string, b *Binding, responseID string)
}

// ShellCommand is one command to run for a response.
type ShellCommand struct {
	ResponseID string
	Agent      string
	WorkerKey  string
	// Binding is the worker a worker-keyed response runs on; the launcher sets it.
	Binding *Binding
	Command string
	Timeout time.Duration
	// AgentCLIEnv holds MINDROOM_AGENT_CLI_TOKEN and MINDROOM_AGENT_CLI_WINDOW.
	AgentCLIEnv map[string]string
}

// Binding records which worker a worker-keyed response runs on. A response stays on the worker
// it started on while that worker is connected; the launcher moves it when the worker is gone.
type Binding struct {
	mu       sync.Mutex
	workerID string
}

// WorkerID is the bound worker, empty when none is.
func (b *Binding) WorkerID() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.workerID
}

// Bind sets the bound worker.
func (b *Binding) Bind(workerID string) {
	b.mu.Lock()
	b.workerID = workerID
	b.mu.Unlock()
}

// Config is what a Manager needs: the responses' section a person configures (Settings),
// whole, and the dependencies the primary builds.
type Config struct {
	// Settings bound the responses and their fast calls; NewManager fills its zero fields as
	// the section's Validate does.
	Settings Settings
	Registry *catalog.Registry
	Shells   ShellLauncher
	Logger   *slog.Logger
	// Clock measures grants' lifetimes and paces the reaper (clock.System when nil).
	Clock clock.Clock
	// Secrets is told of every grant minted and revoked (nil: nobody is).
	Secrets grant.Tracker
	// CallApprovals makes calls of functions that need confirmation wait for an operator,
	// recorded in its Store; nil makes such calls fail at once.
	CallApprovals *CallApprovalConfig
	// Observer hears of every call that settles (nil: nobody does).
	Observer Observer
	// Tracing gives the spans of commands, admissions and dispatches (nil: none are
	// recorded, and a command's shell still gets the context it was started in).
	Tracing trace.TracerProvider
}

// DefaultFastCallBudget is Settings.FastCallBudget unless configured: a few
// milliseconds cover an in-process tool and a fast tool host, and delay a slow call's first
// answer by no more than that.
const DefaultFastCallBudget = 5 * time.Millisecond

// ErrWorkersOnly is why a primary run with Settings.WorkersOnly refuses a response without a worker key.
var ErrWorkersOnly = fault.New(fault.FailedPrecondition, "this primary runs agent commands only on workers (--workers-only): name a worker_key")

// CheckPlacement says whether a response of workerKey may open here: with WorkersOnly, one
// without a worker key may not. Open applies it; an adapter that prepares a response's shells
// before opening it asks first, so nothing is prepared on this host for a response it refuses.
func (m *Manager) CheckPlacement(workerKey string) error {
	if m.cfg.Settings.WorkersOnly && workerKey == "" {
		return ErrWorkersOnly
	}
	return nil
}

// Default bounds on open responses.
const (
	DefaultMaxOpen              = 4096
	DefaultMaxOpenPerCredential = 1024
)

// Manager holds the live responses and the grant index that finds them.
type Manager struct {
	cfg    Config
	grants *grant.Registry[grantee]
	// mcpGrants are the gateway MCP credentials, apart from the grants (mcpcredential.go).
	mcpGrants *grant.Registry[*Response]
	tracer    trace.Tracer

	mu   sync.Mutex
	byID map[string]*Response
	// open counts the responses admitted by Open and not yet forgotten (byID holds them once
	// they are built), in all and by credential key.
	open             int
	openByCredential map[string]int

	callApprovals *CallApprovals // nil: calls needing confirmation fail

	parked atomic.Int64 // long polls waiting for a receipt to become terminal
}

// NewManager returns a Manager with no responses.
func NewManager(cfg Config) *Manager {
	if cfg.Clock == nil {
		cfg.Clock = clock.System
	}
	grants := grant.NewRegistry[grantee](cfg.Clock, cfg.Secrets)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Observer == nil {
		cfg.Observer = noObserver{}
	}
	cfg.Settings = cfg.Settings.withDefaults()
	m := &Manager{cfg: cfg, grants: grants, mcpGrants: grant.NewRegistry[*Response](cfg.Clock, cfg.Secrets), tracer: telemetry.TracerOf(cfg.Tracing, tracerName), byID: make(map[string]*Response),
		openByCredential: make(map[string]int)}
	if cfg.CallApprovals != nil {
		m.callApprovals = newCallApprovals(m, *cfg.CallApprovals)
	}
	return m
}

// OpenOption sets something about a response the runtime cannot ask for.
type OpenOption func(*openOptions)

type openOptions struct {
	jobLifetime time.Duration
	credential  string
}

// ByCredential says the runtime credential whose key (a digest, never the secret) is key asked
// for the response: it is refused past MaxOpen, or past MaxOpenPerCredential responses of that
// credential.
func ByCredential(key string) OpenOption {
	return func(o *openOptions) { o.credential = key }
}

// ForBackgroundJob makes the response's grant live as long as the background job it serves
// may run (lifetime), past the 24 hours a turn's grant is capped at: a background agent keeps
// its tools for its whole ceiling. The job closes the response when it ends, which revokes
// the grant at once.
func ForBackgroundJob(lifetime time.Duration) OpenOption {
	return func(o *openOptions) { o.jobLifetime = lifetime }
}

// Open validates spec and creates a response with a fresh grant.
func (m *Manager) Open(spec Spec, opts ...OpenOption) (*Response, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := m.CheckPlacement(spec.WorkerKey); err != nil {
		return nil, err
	}
	var o openOptions
	for _, opt := range opts {
		opt(&o)
	}
	if err := m.admit(o.credential); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Response{
		id:         uuid.NewString(),
		spec:       spec,
		credential: o.credential,
		mgr:        m,
		ctx:        ctx,
		cancel:     cancel,
	}
	r.identity = catalog.Identity{ResponseID: r.id, Agent: spec.Agent, Requester: spec.Requester,
		Channel: spec.Channel, Thread: spec.Thread, Origin: spec.Origin, WorkerKey: spec.WorkerKey,
		Flags: slices.Clone(spec.Flags)}
	r.view, r.nativeView = r.views(spec.Toolkits)
	r.docs.init(spec.ContextDocuments)
	if o.jobLifetime > 0 {
		r.token, r.digest, r.expires = m.grants.MintForJob(r.grantee(), o.jobLifetime)
	} else {
		r.token, r.digest, r.expires = m.grants.Mint(r.grantee(), spec.GrantLifetime)
	}
	m.mu.Lock()
	m.byID[r.id] = r
	m.mu.Unlock()
	m.cfg.Logger.Info("response opened", "response_id", r.id, "agent", spec.Agent, "worker_key", spec.WorkerKey)
	return r, nil
}

// Get returns the live response with id.
func (m *Manager) Get(id string) (*Response, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.byID[id]
	return r, ok
}

// Authenticate returns the response whose grant token is, if it is live and was presented on
// the path its shells use.
func (m *Manager) Authenticate(token string, p Path) (*Response, bool) {
	g, ok := m.grants.Resolve(token)
	if !ok || !g.accepts(p) {
		return nil, false
	}
	return g.r, true
}

// Len reports the number of live responses.
func (m *Manager) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.byID)
}

// CloseAll closes every live response (at shutdown), including those running approved calls
// whose own response had ended: those calls are interrupted, and no new one starts.
func (m *Manager) CloseAll() {
	if c := m.CallApprovals(); c != nil {
		c.stop()
		defer c.wait()
	}
	m.mu.Lock()
	all := make([]*Response, 0, len(m.byID))
	for _, r := range m.byID {
		all = append(all, r)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, r := range all {
		wg.Go(r.Close)
	}
	wg.Wait()
}

// admit counts a response about to open, refusing it when a runtime credential asks past a
// bound. It runs before anything is built, so a refused open leaves nothing behind.
func (m *Manager) admit(credential string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if credential != "" {
		if m.open >= m.cfg.Settings.MaxOpen {
			return fault.New(fault.LimitExceeded, fmt.Sprintf("this primary already holds %d open responses (its limit, --max-open-responses); close some first", m.cfg.Settings.MaxOpen))
		}
		if m.openByCredential[credential] >= m.cfg.Settings.MaxOpenPerCredential {
			return fault.New(fault.LimitExceeded, fmt.Sprintf("this runtime credential already holds %d open responses (its limit, --max-open-responses-per-credential); close some first", m.cfg.Settings.MaxOpenPerCredential))
		}
		m.openByCredential[credential]++
	}
	m.open++
	return nil
}

func (m *Manager) forget(r *Response) {
	m.mu.Lock()
	delete(m.byID, r.id)
	m.open--
	if r.credential != "" {
		if m.openByCredential[r.credential]--; m.openByCredential[r.credential] <= 0 {
			delete(m.openByCredential, r.credential)
		}
	}
	m.mu.Unlock()
}

// openByCredentialCount is how many open responses credential holds (for tests).
func (m *Manager) openByCredentialCount(credential string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.openByCredential[credential]
}
