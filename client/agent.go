package client

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"sync"
	"time"
)

// This file is what a command served outside this package (`mindroom-agent mcp`, package
// client/mcp) uses of the client: the grant in the environment, the two endpoints, call ids and
// the wait for a receipt. Everything else stays unexported.

// MCPServer serves `mindroom-agent mcp` once its options are read: it answers the MCP messages
// read from stdin on stdout, logs on stderr, reaches the Agent CLI through agent, and returns
// the exit code. pageSize is --page-size, 0 when it is not given. Package client/mcp provides
// it (mcp.Serve); this package cannot import it, so the binaries pass it in with WithMCP.
type MCPServer func(ctx context.Context, agent *Agent, stdin io.Reader, stdout, stderr io.Writer, pageSize int) int

// Option changes how Main runs.
type Option func(*app)

// WithMCP makes Main serve `mindroom-agent mcp` with serve. Without it, that command prints
// its help but cannot run.
func WithMCP(serve MCPServer) Option {
	return func(a *app) { a.serveMCP = serve }
}

// Agent is the Agent CLI of the response whose grant is in the environment, as one run of
// mindroom-agent reaches it: the environment is read when a request needs it, and every
// request shares one HTTP client. Its methods may be called concurrently.
type Agent struct {
	app *app
	mu  sync.Mutex // app.connect creates the shared HTTP client on first use
}

// AgentConfig is what NewAgent needs. Zero durations are the defaults; tests shorten them.
type AgentConfig struct {
	Getenv func(string) string
	// PollInterval paces plain GETs when the server does not long-poll.
	PollInterval time.Duration
	// RequestTimeout bounds each request, plus the wait a long poll asks for.
	RequestTimeout time.Duration
}

// NewAgent returns an Agent that reads its environment with c.Getenv. Main builds its own; this
// is for callers that serve without Main, such as tests.
func NewAgent(c AgentConfig) *Agent {
	a := &app{getenv: c.Getenv, random: rand.Reader, pollInterval: c.PollInterval, requestTimeout: c.RequestTimeout}
	if a.pollInterval == 0 {
		a.pollInterval = defaultPollInterval
	}
	return &Agent{app: a}
}

// Close closes the idle connections of the shared HTTP client.
func (g *Agent) Close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.app.hc != nil {
		g.app.hc.CloseIdleConnections()
	}
}

// Connect validates the environment and returns a connection to its endpoint. The error says
// why the Agent CLI authority is unavailable.
func (g *Agent) Connect() (*Conn, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	tr, err := g.app.connect()
	if err != nil {
		return nil, err
	}
	return &Conn{app: g.app, tr: tr}, nil
}

// NewCallID returns a fresh call id, a random version 4 UUID.
func (g *Agent) NewCallID() (string, error) {
	return newCallID(g.app.random)
}

// NewTimedCallID returns a fresh call id that carries now: a version 7 UUID, whose first 48
// bits are now in Unix milliseconds and whose other 74 bits are random.
func (g *Agent) NewTimedCallID(now time.Time) (string, error) {
	return newTimedCallID(g.app.random, now)
}

// TimedCallIDTime returns the time a call id of NewTimedCallID carries; ok is false for any
// other string, including another spelling of the same UUID.
func TimedCallIDTime(id string) (t time.Time, ok bool) { return timedCallIDTime(id) }

// Conn sends Agent CLI requests to one validated endpoint. Its errors are classified by
// ErrorKind.
type Conn struct {
	app *app
	tr  *transport
}

// Post sends one operation object and returns the object answered.
func (c *Conn) Post(ctx context.Context, op map[string]any) (*Reply, error) {
	r, err := post(ctx, c.tr, op)
	if err != nil {
		return nil, err
	}
	return &Reply{r: r}, nil
}

// Wait reads the receipt of callID until it is terminal or the deadline passes, long-polling
// (plain polling when the server does not long-poll), and returns the newest receipt it has;
// on error it returns the last good receipt with it. It never cancels the call.
func (c *Conn) Wait(ctx context.Context, callID string, last *Reply, deadline time.Time) (*Reply, error) {
	r, err := c.app.waitFor(ctx, c.tr, callID, last.r, deadline)
	return &Reply{r: r}, err
}

// Get reads the receipt of callID once: at once when wait is 0, else long-polling until it is
// terminal or wait passes (at most MaxLongPoll is asked). A server that rejects the long-poll
// query (HTTP 400 or 422, as one without it does) is asked again at once, without it.
func (c *Conn) Get(ctx context.Context, callID string, wait time.Duration) (*Reply, error) {
	r, err := c.tr.get(ctx, callID, min(wait, MaxLongPoll))
	if err != nil && wait > 0 && rejectsQuery(err) {
		r, err = c.tr.get(ctx, callID, 0)
	}
	if err != nil {
		return nil, err
	}
	if _, err := receiptStatus(r); err != nil {
		return nil, err
	}
	return &Reply{r: r}, nil
}

// LoadToolkit loads a deferred toolkit; why is the server's message when it answered that the
// toolkit has no such function, in case the toolkit did not load (see loadToolkit).
func (c *Conn) LoadToolkit(ctx context.Context, toolkit string) (why string, err error) {
	return loadToolkit(ctx, c.tr, toolkit)
}

// ListPage reads one tools.list page of at most limit items (1 to MaxListLimit), from cursor
// when it is not nil; next is nil on the last page.
func (c *Conn) ListPage(ctx context.Context, cursor *string, limit int) (items []ListItem, next *string, err error) {
	return listPage(ctx, c.tr, cursor, limit)
}

// Reply is an object answered by the Agent CLI.
type Reply struct{ r *reply }

// Object is the answered object. The caller must not change it.
func (r *Reply) Object() map[string]any { return r.r.obj }

// Status is the status of a receipt, or an error when it has no known status.
func (r *Reply) Status() (string, error) { return receiptStatus(r.r) }

// IsTerminal reports whether a receipt status will never change again.
func IsTerminal(status string) bool { return isTerminal(status) }

// ErrorKind classifies an error of this package: the exit code mindroom-agent gives it
// (ExitInvalid for a rejection of the request, ExitUnavailable otherwise) and the HTTP status
// that caused it, 0 when no response came. An error of another package is ExitUnavailable, 0.
func ErrorKind(err error) (exitCode, httpStatus int) {
	var e *cliError
	if errors.As(err, &e) {
		return e.code, e.status
	}
	return ExitUnavailable, 0
}
