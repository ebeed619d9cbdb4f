package mcpbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/turncli/turncli/internal/backoff"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/loopback"
	"github.com/turncli/turncli/internal/telemetry"
	"github.com/turncli/turncli/primary/catalog"
)

// Options are a Toolkit's collaborators and tuning; the zero value is the production setting.
type Options struct {
	// Logger receives the toolkit's events, each naming the server (mcp_server); nil discards
	// them.
	Logger *slog.Logger
	// Now is the clock of the restart backoff (time.Now by default).
	Now func() time.Time
	// LookupEnv reads the primary's variables a stdio server may inherit (os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// StopGrace is how long a stdio server gets to exit after its stdin closes, and again after
	// SIGTERM, before its group is killed (default 2 s).
	StopGrace time.Duration
	// BackoffBase and BackoffMax shape the delay before starting a server again after
	// consecutive failures: none after the first, then BackoffBase doubling up to BackoffMax
	// (defaults 500 ms and 30 s).
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// PingTimeout is how long a server has to answer the ping sent after one of its calls or
	// loads timed out before it is taken for wedged and restarted (default 10 s).
	PingTimeout time.Duration
}

// maxListPages bounds how many tools/list pages a load follows.
const maxListPages = 1000

// exitStatusWait bounds how long a failed call waits to learn how a dying stdio server ended.
const exitStatusWait = 2 * time.Second

// Toolkit is one mounted MCP server, as a deferred catalog toolkit. It starts the server on first
// use and again on the first use after the server failed. Close stops it.
type Toolkit struct {
	cfg    ServerConfig
	opts   Options
	log    *slog.Logger
	client *mcp.Client
	http   *http.Client // streamable HTTP only
	httpTr *http.Transport

	ctx    context.Context // ends at Close: calls, starts and sessions end with it
	cancel context.CancelFunc
	wg     sync.WaitGroup // every goroutine the toolkit starts

	mu       sync.Mutex
	closed   bool
	sess     *session      // the live session, nil when the server is not running
	starting *startAttempt // non-nil while a start runs
	failures int           // consecutive failures (start, exit, broken connection)
	retryAt  time.Time     // no start before this
	lastErr  string
	starts   int64         // sessions started since New
	skipped  []SkippedTool // what the last successful load left out
}

var _ catalog.Toolkit = (*Toolkit)(nil)

// startAttempt is one start of the server that concurrent users wait for.
type startAttempt struct {
	done chan struct{}
	err  error // set before done closes
}

// session is one connection to the server (one subprocess over stdio).
type session struct {
	cs           *mcp.ClientSession
	proc         *process // nil over HTTP
	instructions string

	pinging bool // guarded by Toolkit.mu: a ping after a timeout is in flight

	discardOnce sync.Once
	discard     chan struct{} // closed to ask the supervisor to close the session
	ended       chan struct{} // closed once the session is closed (and its process reaped)
}

// New returns the toolkit of one configured server. It starts nothing: the server starts on the
// first describe or call. Everything it starts ends when ctx ends or Close is called; Close
// waits for it.
func New(ctx context.Context, cfg ServerConfig, opts Options) (*Toolkit, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	if opts.StopGrace <= 0 {
		opts.StopGrace = 2 * time.Second
	}
	if opts.BackoffBase <= 0 {
		opts.BackoffBase = 500 * time.Millisecond
	}
	if opts.BackoffMax <= 0 {
		opts.BackoffMax = 30 * time.Second
	}
	if opts.PingTimeout <= 0 {
		opts.PingTimeout = 10 * time.Second
	}
	t := &Toolkit{cfg: cfg, opts: opts, log: opts.Logger.With("mcp_server", cfg.Name)}
	t.ctx, t.cancel = context.WithCancel(ctx)
	t.client = mcp.NewClient(&mcp.Implementation{Name: "turncli-primary", Version: "1"}, &mcp.ClientOptions{
		Logger:       t.log,
		Capabilities: &mcp.ClientCapabilities{}, // no roots, sampling or elicitation
	})
	if cfg.Transport == TransportStreamableHTTP {
		t.httpTr = &http.Transport{
			Proxy:               nil, // a loopback server is never reached through a proxy
			DialContext:         (&net.Dialer{Timeout: 10 * time.Second, Control: loopbackOnly}).DialContext,
			MaxIdleConnsPerHost: 4,
			IdleConnTimeout:     90 * time.Second,
		}
		t.http = &http.Client{
			Transport: t.httpTr,
			// A redirect could lead off loopback: it is returned to the SDK as a failure.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	return t, nil
}

// loopbackOnly refuses connections to anything but a loopback address, whatever the URL's host
// name resolved to.
func loopbackOnly(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	if net.ParseIP(host) == nil || !loopback.Host(host) { // an IP: names were resolved already
		return fmt.Errorf("refusing to connect to %s: not a loopback address", address)
	}
	return nil
}

// Name is the configured server name.
func (t *Toolkit) Name() string { return t.cfg.Name }

// Description is the configured description.
func (t *Toolkit) Description() string { return t.cfg.Description }

// Deferred reports true: the server starts on the first describe or call.
func (t *Toolkit) Deferred() bool { return true }

// Load starts the server if needed and reads its whole tool list, following tools/list cursors
// to the end, within the load timeout.
func (t *Toolkit) Load(ctx context.Context) (catalog.Definition, error) {
	timeout := time.Duration(t.cfg.LoadTimeout)
	lctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stop := context.AfterFunc(t.ctx, cancel)
	defer stop()

	s, err := t.acquire(lctx)
	if err != nil {
		return catalog.Definition{}, t.failure(ctx, lctx, nil, err, "the tool list", timeout)
	}
	var tools []*mcp.Tool
	cursor := ""
	seen := map[string]bool{}
	for page := 0; ; page++ {
		res, err := s.cs.ListTools(lctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return catalog.Definition{}, t.failure(ctx, lctx, s, err, "the tool list", timeout)
		}
		tools = append(tools, res.Tools...)
		if res.NextCursor == "" {
			break
		}
		if seen[res.NextCursor] || page+1 >= maxListPages {
			return catalog.Definition{}, fmt.Errorf("MCP server %q: tools/list pagination does not end", t.cfg.Name)
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
	t.succeeded()

	def := catalog.Definition{}
	if s.instructions != "" {
		def.Instructions = []string{s.instructions}
	}
	var skipped []SkippedTool
	listed := map[string]bool{}
	for _, tool := range tools {
		var fn catalog.Function
		reason, err := SkipDuplicate, errDuplicate
		if !listed[tool.Name] {
			listed[tool.Name] = true
			fn, reason, err = function(t.cfg.Name, tool)
		}
		if err != nil {
			skipped = append(skipped, SkippedTool{Name: tool.Name, Reason: reason, Err: err.Error()})
			t.log.Warn("MCP tool skipped", "tool", logText(tool.Name, maxLoggedName), "reason", string(reason),
				"err", logText(err.Error(), maxLoggedErr))
			continue
		}
		def.Functions = append(def.Functions, fn)
	}
	t.mu.Lock()
	t.skipped = skipped
	t.mu.Unlock()
	t.log.Info("MCP server tools loaded", "functions", len(def.Functions), "skipped", len(skipped))
	return def, nil
}

// SkipReason says why a tool of a server's list was left out of its toolkit.
type SkipReason string

// The reasons a tool is left out. Anything else wrong with a server (it cannot be started or
// initialised, or its tools/list fails) fails the whole load instead.
const (
	// SkipInvalidName: the name breaks the catalog's naming rule (catalog.ValidName).
	SkipInvalidName SkipReason = "invalid_name"
	// SkipInvalidSchema: the input schema is not a JSON object, or the catalog refuses it
	// (catalog.ErrInvalidSchema: too deep, too large, refers outside itself, does not compile).
	SkipInvalidSchema SkipReason = "invalid_schema"
	// SkipDuplicate: an earlier tool of the list has the same name; only the first listing
	// can be the one the server runs, and only if it is valid itself.
	SkipDuplicate SkipReason = "duplicate"
	// SkipInvalid: the catalog refuses the tool for another reason.
	SkipInvalid SkipReason = "invalid"
)

// SkipReasons are all the reasons, in a fixed order.
var SkipReasons = []SkipReason{SkipInvalidName, SkipInvalidSchema, SkipDuplicate, SkipInvalid}

var errDuplicate = errors.New("a tool of this name was listed before; only the first listing is taken")

// SkippedTool is a tool of the server's list that its toolkit left out.
type SkippedTool struct {
	// Name is the name the server listed: untrusted text, which may hold any character.
	Name   string
	Reason SkipReason
	// Err says which rule the tool breaks.
	Err string
}

// Skipped returns the tools the last successful load left out, in the server's order.
func (t *Toolkit) Skipped() []SkippedTool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.skipped)
}

// function converts a tool of the server named server to a catalog function, or says why it
// cannot be one. The rules are the catalog's (catalog.CheckFunction), applied to each tool so
// that one bad tool is left out instead of failing the whole server; MCP adds that an input
// schema is an object.
func function(server string, tool *mcp.Tool) (catalog.Function, SkipReason, error) {
	description := tool.Description
	if description == "" {
		description = tool.Title
	}
	fn := catalog.Function{Name: tool.Name, Description: description}
	if tool.InputSchema != nil {
		raw, err := json.Marshal(tool.InputSchema)
		if err != nil {
			return catalog.Function{}, SkipInvalidSchema, fmt.Errorf("input schema: %w", err)
		}
		if !bytes.HasPrefix(raw, []byte("{")) { // json.Marshal writes no leading space
			return catalog.Function{}, SkipInvalidSchema, errors.New("input schema is not a JSON object")
		}
		fn.InputSchema = raw
	}
	switch err := catalog.CheckFunction(server, fn); {
	case err == nil:
		return fn, "", nil
	case errors.Is(err, catalog.ErrInvalidName):
		return catalog.Function{}, SkipInvalidName, err
	case errors.Is(err, catalog.ErrInvalidSchema):
		return catalog.Function{}, SkipInvalidSchema, err
	default:
		return catalog.Function{}, SkipInvalid, err
	}
}

// Bounds of untrusted text in a log line.
const (
	maxLoggedName = 256
	maxLoggedErr  = 1024
)

// logText is untrusted text s as a log attribute: cut to at most max bytes, then written as a
// Go string literal without its quotes, so that a control, format or invalid character shows
// as an escape (\a, \x1b, \u202e, \xff) and cannot forge or hide part of the line.
func logText(s string, max int) string {
	cut := ""
	if len(s) > max {
		n := max
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s, cut = s[:n], "…"
	}
	q := strconv.Quote(s)
	return q[1:len(q)-1] + cut
}

// Call runs one tools/call within the call timeout, starting the server first if it is not
// running. The call's deadline is its own: the caller's or the call timeout, whichever comes
// first; when it passes, the call alone fails (fault.DeadlineExceeded), the SDK sends the
// server notifications/cancelled for it, and other calls on the session go on. Nothing of the
// toolkit is held across the call, and the SDK sends concurrent calls on one session without
// waiting for each other.
func (t *Toolkit) Call(ctx context.Context, call catalog.Call) (catalog.Result, error) {
	timeout := time.Duration(t.cfg.CallTimeout)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stop := context.AfterFunc(t.ctx, cancel)
	defer stop()

	s, err := t.acquire(cctx)
	if err != nil {
		return catalog.Result{}, t.failure(ctx, cctx, nil, err, "the call", timeout)
	}
	args := call.Arguments
	if args == nil {
		args = map[string]any{}
	}
	res, err := s.cs.CallTool(cctx, &mcp.CallToolParams{Name: call.Function, Arguments: args, Meta: traceMeta(ctx)})
	if err != nil {
		return catalog.Result{}, t.failure(ctx, cctx, s, err, "the call", timeout)
	}
	t.succeeded() // a tool error is the tool's answer: the server works
	return convertResult(res)
}

// traceMeta is the _meta of a tools/call: the W3C trace context of the call's dispatch, as
// MCP's SEP-414 proposes, so a server that traces continues the trace; nil when there is none.
func traceMeta(ctx context.Context) mcp.Meta {
	traceparent, tracestate := telemetry.Inject(ctx)
	if traceparent == "" {
		return nil
	}
	meta := mcp.Meta{telemetry.TraceparentKey: traceparent}
	if tracestate != "" {
		meta[telemetry.TracestateKey] = tracestate
	}
	return meta
}

// Close stops the server and waits for every goroutine and process the toolkit started. Calls
// still running fail. The toolkit cannot be used afterwards.
func (t *Toolkit) Close() error {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.cancel()
	t.wg.Wait()
	if t.httpTr != nil {
		t.httpTr.CloseIdleConnections()
	}
	return nil
}

// errStopped is the failure of a use after Close (or after the primary's context ended).
func (t *Toolkit) errStopped() error {
	return fmt.Errorf("MCP server %q is stopped: the primary is shutting down", t.cfg.Name)
}

// acquire returns the live session, starting the server if it is not running and its backoff
// allows. Concurrent callers share one start.
func (t *Toolkit) acquire(ctx context.Context) (*session, error) {
	for {
		t.mu.Lock()
		if t.closed || t.ctx.Err() != nil {
			t.mu.Unlock()
			return nil, t.errStopped()
		}
		if s := t.sess; s != nil {
			t.mu.Unlock()
			return s, nil
		}
		if st := t.starting; st != nil {
			t.mu.Unlock()
			select {
			case <-st.done:
				if st.err != nil {
					return nil, st.err // one failed start per wave of users, not one each
				}
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if wait := t.retryAt.Sub(t.opts.Now()); wait > 0 {
			err := fmt.Errorf("MCP server %q is unavailable after %d consecutive failures (last: %s); it will be started again on a use after %s",
				t.cfg.Name, t.failures, t.lastErr, wait.Round(time.Millisecond))
			t.mu.Unlock()
			return nil, errUnavailable{err}
		}
		st := &startAttempt{done: make(chan struct{})}
		t.starting = st
		t.wg.Add(1) // the start, so Close waits for it and for what it starts
		t.mu.Unlock()

		s, err := t.start(ctx)

		t.mu.Lock()
		t.starting = nil
		switch {
		case err == nil && t.closed:
			err = t.errStopped() // the supervisor closes s: t.ctx has ended
		case err == nil:
			t.sess = s
			t.starts++
		case t.ctx.Err() != nil || errors.Is(ctx.Err(), context.Canceled):
			// Stopping, or the caller went away: not the server's failure.
		default:
			t.failedLocked("start failed: " + err.Error())
		}
		if err != nil && ctx.Err() == nil {
			st.err = err // waiters share a failure that is not about this caller's context
		}
		close(st.done)
		t.mu.Unlock()
		t.wg.Done()
		if err != nil {
			return nil, err
		}
		return s, nil
	}
}

// Restarts counts the times the server was started again after its first session ended: a
// session's end is the server's exit or a broken connection, and the next use starts it anew.
func (t *Toolkit) Restarts() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return max(t.starts-1, 0)
}

// errUnavailable marks a use refused by the restart backoff.
type errUnavailable struct{ error }

func (e errUnavailable) Unwrap() error { return e.error }

// start starts the server and initialises a session within the load timeout.
func (t *Toolkit) start(ctx context.Context) (*session, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(t.cfg.LoadTimeout))
	defer cancel()

	var transport mcp.Transport
	var proc *process
	switch t.cfg.Transport {
	case TransportStdio:
		var err error
		proc, err = startProcess(t.cfg, serverEnv(t.cfg, t.opts.LookupEnv), t.opts.StopGrace, &t.wg)
		if err != nil {
			return nil, err
		}
		transport = &mcp.IOTransport{Reader: stdoutReader{proc}, Writer: stdinCloser{proc}}
	case TransportStreamableHTTP:
		transport = &mcp.StreamableClientTransport{
			Endpoint: t.cfg.URL, HTTPClient: t.http,
			MaxRetries:           -1,   // a broken stream fails the session; the next use reconnects
			DisableStandaloneSSE: true, // no server-initiated messages are used
		}
	}
	cs, err := t.client.Connect(ctx, transport, nil)
	if err != nil {
		if proc != nil {
			proc.stop()
			if st := proc.status(); st != "" {
				err = fmt.Errorf("%w (the server ended: %s)", err, st)
			}
			t.logEnded(proc, "MCP server ended before initialising")
		}
		return nil, err
	}
	s := &session{cs: cs, proc: proc, discard: make(chan struct{}), ended: make(chan struct{})}
	if ir := cs.InitializeResult(); ir != nil {
		s.instructions = ir.Instructions
	}
	t.supervise(s)
	attrs := []any{"transport", t.cfg.Transport}
	if proc != nil {
		attrs = append(attrs, "pid", proc.pgid)
	}
	t.log.Info("MCP server started", attrs...)
	return s, nil
}

// supervise starts the session's two goroutines: one closes it when asked or when the toolkit
// stops; the other notices that it ended (the server exited, or the connection closed) and
// forgets it, so the next use starts the server again.
func (t *Toolkit) supervise(s *session) {
	t.wg.Add(2)
	go func() {
		defer t.wg.Done()
		select {
		case <-s.discard:
		case <-t.ctx.Done():
		case <-s.ended:
			return
		}
		_ = s.cs.Close()
	}()
	go func() {
		defer t.wg.Done()
		err := s.cs.Wait()
		_ = s.cs.Close() // reaps a stdio server; a no-op when already closed
		reason := "connection closed"
		if err != nil {
			reason += ": " + err.Error()
		}
		if s.proc != nil {
			reason = "the server ended: " + s.proc.status()
		}
		t.mu.Lock()
		stopping := t.closed || t.ctx.Err() != nil
		if t.sess == s { // not yet forgotten by a call that saw the transport fail
			t.sess = nil
			if !stopping {
				t.failedLocked(reason)
			}
		}
		t.mu.Unlock()
		if !stopping {
			t.logEnded(s.proc, "MCP server ended unexpectedly", "reason", reason)
		} else {
			t.log.Info("MCP server stopped")
		}
		close(s.ended)
	}()
}

func (t *Toolkit) logEnded(proc *process, msg string, attrs ...any) {
	if proc != nil {
		attrs = append(attrs, "status", proc.status(), "stderr_tail", proc.stderr.String())
	}
	t.log.Warn(msg, attrs...)
}

// discardSession forgets a session whose transport failed and has it closed.
func (t *Toolkit) discardSession(s *session, cause error) {
	t.mu.Lock()
	if t.sess == s {
		t.sess = nil
		t.failedLocked("connection failed: " + cause.Error())
	}
	t.mu.Unlock()
	s.discardOnce.Do(func() { close(s.discard) })
}

// ping asks, in the background, whether the server of s still answers after a use of s timed
// out. An answer, even an error, means only that use hung, and the session stays. No answer
// within PingTimeout means the whole server is wedged (one that handles one request at a time
// and is stuck in it, or a stopped process): every later use would time out too, so the
// session is discarded, which stops a stdio server, and the next use starts it anew. One ping
// of a session runs at a time.
func (t *Toolkit) ping(s *session) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || t.sess != s || s.pinging {
		return
	}
	s.pinging = true
	t.wg.Add(1) // under mu and before closed is set: Close waits for it
	go func() {
		defer t.wg.Done()
		ctx, cancel := context.WithTimeout(t.ctx, t.opts.PingTimeout)
		defer cancel()
		err := s.cs.Ping(ctx, nil)
		t.mu.Lock()
		s.pinging = false
		t.mu.Unlock()
		var wire *jsonrpc.Error
		if err == nil || errors.As(err, &wire) || t.ctx.Err() != nil {
			return
		}
		t.log.Warn("MCP server unresponsive", "ping_timeout", t.opts.PingTimeout, "err", err)
		t.discardSession(s, fmt.Errorf("no answer to a ping after a use timed out (%w)", err))
	}()
}

// failedLocked records a failure and schedules the earliest next start.
func (t *Toolkit) failedLocked(reason string) {
	t.failures++
	t.lastErr = reason
	delay := time.Duration(0) // the first failure may be the server's alone: start again at once
	if t.failures > 1 {
		delay = backoff.Policy{Min: t.opts.BackoffBase, Max: t.opts.BackoffMax}.Delay(t.failures - 1)
	}
	t.retryAt = t.opts.Now().Add(delay)
}

// succeeded clears the failure count: the server answered.
func (t *Toolkit) succeeded() {
	t.mu.Lock()
	t.failures = 0
	t.retryAt = time.Time{}
	t.lastErr = ""
	t.mu.Unlock()
}

// failure turns an error of a load or call into the error the caller reports. parent is the
// caller's context, ctx the bounded one the work ran under; s is the session used, if any.
func (t *Toolkit) failure(parent, ctx context.Context, s *session, err error, what string, timeout time.Duration) error {
	name := t.cfg.Name
	var unavailable errUnavailable
	var wire *jsonrpc.Error
	switch {
	case parent.Err() != nil:
		return parent.Err() // the caller went away; it reports that itself
	case t.ctx.Err() != nil:
		return t.errStopped()
	case errors.As(err, &unavailable):
		return err
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		if s != nil {
			t.ping(s)
		}
		return fault.Newf(fault.DeadlineExceeded, "MCP server %q did not complete %s within %s", name, what, timeout)
	case s == nil:
		return fmt.Errorf("MCP server %q could not be started: %v", name, err)
	case errors.As(err, &wire):
		return fmt.Errorf("MCP server %q rejected %s: %s", name, what, wire.Message)
	}
	// The transport failed: the server exited or the connection broke.
	t.discardSession(s, err)
	if s.proc != nil {
		timer := time.NewTimer(exitStatusWait)
		defer timer.Stop()
		select {
		case <-s.proc.done:
		case <-timer.C:
		case <-ctx.Done():
		}
		if st := s.proc.status(); st != "" {
			return fmt.Errorf("MCP server %q exited during %s (%s); effects may have occurred. It will be started again on next use", name, what, st)
		}
	}
	return fmt.Errorf("MCP server %q connection failed during %s (%v); effects may have occurred. It will be reconnected on next use", name, what, err)
}
