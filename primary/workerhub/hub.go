package workerhub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	agentcliv1 "github.com/turncli/turncli/gen/turncli/agentcli/v1"
	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/internal/clierr"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/workermeta"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/response"
	"google.golang.org/grpc"
)

// Config is what a Hub needs.
type Config struct {
	Credentials *Credentials
	Logger      *slog.Logger
	// OutputCredit is how many output chunks a worker may send ahead per command.
	OutputCredit int
	// Liveness says how workers that stopped answering are found (zero fields: defaults).
	Liveness Liveness
}

// Hub keeps the connected workers and runs commands on them.
type Hub struct {
	cfg     Config
	nextCmd atomic.Uint64

	mu     sync.Mutex
	closed bool
	byID   map[string]*conn
	byKey  map[string]map[string]*conn
	picks  uint64 // responses bound so far: the clock of conn.lastPicked
	// changed is closed (and replaced) whenever a worker connects or disconnects.
	changed chan struct{}
	// jobChain holds, per worker id, the jobsDone of its latest connection, so a new
	// connection's job reports reach the sink only after the previous one's.
	jobChain map[string]chan struct{}
}

// New returns a Hub with no workers.
func New(cfg Config) *Hub {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.OutputCredit <= 0 {
		cfg.OutputCredit = 32
	}
	cfg.Liveness = cfg.Liveness.OrDefaults()
	return &Hub{
		cfg: cfg, byID: make(map[string]*conn), byKey: make(map[string]map[string]*conn), changed: make(chan struct{}),
		jobChain: make(map[string]chan struct{}),
	}
}

// serve serves one worker connection until it ends, its job reports going to sink.
func (h *Hub) serve(stream workerv1.WorkerService_ConnectServer, sink jobs.WorkerSink) error {
	ident, err := h.cfg.Credentials.authenticate(stream.Context())
	if err != nil {
		return err
	}
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	hello := first.GetHello()
	if err := validateHello(hello, ident); err != nil {
		return err
	}
	held, err := helloJobs(hello.GetJobs())
	if err != nil {
		return fault.New(fault.InvalidArgument, err.Error())
	}
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	c := &conn{
		ident: ident, session: uuid.NewString(), since: time.Now(), proxyURL: origin(hello.GetAgentCliUrl()),
		capacity: int(hello.GetCapacity()), defaultTimeout: hello.GetDefaultTimeout().AsDuration(),
		maxTimeout: hello.GetMaxTimeout().AsDuration(), answersPing: hello.GetAnswersPing(), stream: stream, cancel: cancel, done: ctx.Done(),
		gone: make(chan struct{}), commands: make(map[string]*remoteCommand),
		sink: sink, jobEvents: make(chan jobEvent, jobQueue), jobsDone: make(chan struct{}),
		reported: make(chan struct{}),
	}
	log := h.cfg.Logger.With("worker_id", ident.ID, "worker_key", ident.Key, "session", c.session)
	// Register before the Welcome and under the send lock: a welcomed worker is routable at
	// once, and no StartCommand can overtake its Welcome.
	c.sendMu.Lock()
	if err := h.register(c); err != nil {
		c.sendMu.Unlock()
		return err
	}
	go h.dispatchJobs(ctx, c)
	receiving := false
	defer func() {
		h.unregister(c)
		close(c.gone)
		if !receiving {
			close(c.jobEvents) // else the receive loop closes it
		}
		log.Info("worker disconnected")
	}()
	err = c.stream.Send(&workerv1.ConnectResponse{Event: &workerv1.ConnectResponse_Welcome{Welcome: &workerv1.Welcome{SessionId: c.session}}})
	c.sendMu.Unlock()
	if err != nil {
		return err
	}
	log.Info("worker connected", "capacity", c.capacity, "jobs", len(held))
	// The queue is empty: the worker's jobs are the first report of the connection.
	_ = c.queueJob(func(ctx context.Context, s jobs.WorkerSink) {
		s.WorkerJobs(ctx, ident.Key, ident.ID, held)
		close(c.reported)
	})

	received := make(chan error, 1)
	receiving = true
	go func() { received <- c.receive() }()
	silent := make(chan error, 1)
	if c.answersPing {
		go func() { silent <- c.watch(h.cfg.Liveness, c.done) }()
	}
	select {
	case err := <-received:
		if errors.Is(err, errProtocol) {
			return fault.New(fault.InvalidArgument, err.Error())
		}
		return nil
	case <-silent: // nil only once ctx is done, which the next case also sees
		if ctx.Err() == nil {
			c.away.Store(true)
			log.Warn("worker stopped answering; disconnecting it", "liveness_timeout", h.cfg.Liveness.Timeout.String())
			return fault.Newf(fault.Unavailable, "the worker answered nothing for %s", h.cfg.Liveness.Timeout)
		}
		return fault.New(fault.Conflict, "connection replaced or primary stopping")
	case <-ctx.Done(): // replaced by a newer connection of the same worker, or shutting down
		return fault.New(fault.Conflict, "connection replaced or primary stopping")
	}
}

func validateHello(hello *workerv1.Hello, ident Identity) error {
	switch {
	case hello == nil:
		return fault.New(fault.InvalidArgument, "the first message must be Hello")
	case hello.GetWorkerId() != ident.ID:
		return fault.New(fault.InvalidArgument, "Hello.worker_id must equal the "+workermeta.IDKey+" metadata")
	case hello.GetWorkerKey() != ident.Key:
		return fault.New(fault.PermissionDenied, "this credential does not authorise that worker key")
	}
	u, err := url.Parse(hello.GetAgentCliUrl())
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return fault.New(fault.InvalidArgument, "Hello.agent_cli_url must be an http(s) origin")
	}
	return nil
}

// register makes c routable, replacing a live connection of the same worker (same id and key).
// An id live under another key is refused: one key's credential must not disconnect another
// key's worker.
func (h *Hub) register(c *conn) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return fault.New(fault.Unavailable, "the primary is stopping")
	}
	if old := h.byID[c.ident.ID]; old != nil && old.ident.Key != c.ident.Key {
		return fault.New(fault.AlreadyExists, "a worker with this id is connected under another key")
	}
	if old := h.byID[c.ident.ID]; old != nil {
		old.cancel()
		delete(h.byKey[old.ident.Key], old.ident.ID)
	}
	h.byID[c.ident.ID] = c
	c.prevJobs = h.jobChain[c.ident.ID]
	h.jobChain[c.ident.ID] = c.jobsDone
	if h.byKey[c.ident.Key] == nil {
		h.byKey[c.ident.Key] = make(map[string]*conn)
	}
	h.byKey[c.ident.Key][c.ident.ID] = c
	h.notifyLocked()
	return nil
}

func (h *Hub) notifyLocked() {
	close(h.changed)
	h.changed = make(chan struct{})
}

// WaitConnected blocks until a worker with id is connected (routable), or ctx ends.
func (h *Hub) WaitConnected(ctx context.Context, id string) error {
	for {
		h.mu.Lock()
		_, ok := h.byID[id]
		changed := h.changed
		h.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (h *Hub) unregister(c *conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byID[c.ident.ID] == c {
		delete(h.byID, c.ident.ID)
		delete(h.byKey[c.ident.Key], c.ident.ID)
		h.notifyLocked()
	}
}

// connected reports whether ident is a live connection.
func (h *Hub) connected(ident Identity) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.byID[ident.ID]
	return c != nil && c.ident.Key == ident.Key
}

// Close ends every worker connection and refuses new ones (at shutdown); the workers'
// running commands fail and the workers reconnect to whichever primary comes next.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for _, c := range h.byID {
		c.cancel()
	}
}

// Workers lists the connected workers' identities.
func (h *Hub) Workers() []Identity {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Identity, 0, len(h.byID))
	for _, c := range h.byID {
		out = append(out, c.ident)
	}
	return out
}

// pick returns the worker a response runs on: the one it is bound to while that one is
// connected, else the next worker of its key (see nextLocked), then bound. A command to run,
// when given, is added to the chosen worker's load before the choice is released, so commands
// placed at the same moment see each other and no unbound response's command is sent to a
// worker already full. (A bound response's commands go to its worker, full or not: the worker
// refuses what it has no room for.)
func (h *Hub) pick(key string, b *response.Binding, reserve *remoteCommand) (*conn, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if id := b.WorkerID(); id != "" {
		if c := h.byID[id]; c != nil && c.ident.Key == key {
			if reserve != nil {
				c.add(reserve)
			}
			return c, nil
		}
	}
	best, err := h.nextLocked(key)
	if err != nil {
		return nil, err
	}
	b.Bind(best.ident.ID)
	h.picks++
	best.lastPicked = h.picks
	if reserve != nil {
		best.add(reserve)
	}
	return best, nil
}

// nextLocked is the worker of key a new response goes to: the least busy one with room; among
// equally busy ones, the one chosen longest ago, so idle workers take turns rather than the
// first one met in a map's order taking most, and a worker that just connected joins the turns
// at once; workers never chosen go in the order of their ids, so the same state always gives
// the same choice. It chooses without taking the turn: pick does, when it binds a response.
func (h *Hub) nextLocked(key string) (*conn, error) {
	var best *conn
	for _, c := range h.byKey[key] {
		if c.capacity > 0 && c.load() >= c.capacity {
			continue
		}
		if best == nil || c.before(best) {
			best = c
		}
	}
	if best == nil {
		if len(h.byKey[key]) == 0 {
			return nil, fmt.Errorf("no worker with key %q is connected", key)
		}
		return nil, fmt.Errorf("every worker with key %q is at capacity", key)
	}
	return best, nil
}

// before reports whether c comes before d as the next worker of their key; guarded by the
// Hub's mu.
func (c *conn) before(d *conn) bool {
	if cl, dl := c.load(), d.load(); cl != dl {
		return cl < dl
	}
	if c.lastPicked != d.lastPicked {
		return c.lastPicked < d.lastPicked
	}
	return c.ident.ID < d.ident.ID
}

// NextAgentCLIURL is the sandbox proxy origin of the worker a new response of key would go to
// now, or why none can take one. It places nothing: asking (a shell mode's preflight) takes no
// worker's turn.
func (h *Hub) NextAgentCLIURL(key string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := h.nextLocked(key)
	if err != nil {
		return "", err
	}
	return c.proxyURL, nil
}

// AgentCLIURL is the bound worker's sandbox proxy origin.
func (h *Hub) AgentCLIURL(key string, b *response.Binding) (string, error) {
	c, err := h.pick(key, b, nil)
	if err != nil {
		return "", err
	}
	return c.proxyURL, nil
}

// agentCLIMethods prefixes the full names of AgentCLIService's methods.
var agentCLIMethods = "/" + agentcliv1.AgentCLIService_ServiceDesc.ServiceName + "/"

// AgentCLIInterceptor authenticates the worker behind a forwarded Agent CLI call and marks the
// call with that worker's path. Only AgentCLIService methods pass through it.
func (h *Hub) AgentCLIInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if !strings.HasPrefix(info.FullMethod, agentCLIMethods) {
			return handler(ctx, req)
		}
		ident, err := h.cfg.Credentials.authenticate(ctx)
		if err != nil || !h.connected(ident) {
			return nil, clierr.ErrUnauthenticated
		}
		return handler(response.WithPath(ctx, response.Path{WorkerKey: ident.Key, WorkerID: ident.ID}), req)
	}
}

// commandGrace bounds how long a cancelled command may take to report its exit.
const commandGrace = 30 * time.Second

// origin is scheme://host of a URL validateHello accepted (which may end in "/"), the exact
// shape MINDROOM_AGENT_CLI_URL must have.
func origin(raw string) string {
	u, _ := url.Parse(raw)
	return u.Scheme + "://" + u.Host
}
