package mcpgateway

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	agentmcp "github.com/turncli/turncli/client/mcp"
	"github.com/turncli/turncli/internal/agentclihttp"
	"github.com/turncli/turncli/internal/authlimit"
	"github.com/turncli/turncli/internal/bearer"
	"github.com/turncli/turncli/internal/buildinfo"
	"github.com/turncli/turncli/primary/response"
)

// Path is where the gateway MCP endpoint is served on the REST listener.
const Path = "/mcp"

// MaxBodyBytes bounds a request body: the Agent CLI's bound on one operation.
const MaxBodyBytes = agentclihttp.MaxOperationBytes

// unauthorizedBody is the one answer to every refused credential (absent, malformed, unknown,
// expired, revoked, another response's, an Agent CLI grant), so a refusal says nothing of why.
const unauthorizedBody = `{"detail":"MCP gateway authority is unavailable"}`

// Config is what the gateway needs; every field but Logger is required.
type Config struct {
	Responses *response.Manager
	// Failures counts refused credentials per address, as the REST edge does, past its limit
	// answering 429 instead of 401.
	Failures *authlimit.Limiter
	Logger   *slog.Logger
}

// Gateway is the gateway MCP endpoint's HTTP handler.
type Gateway struct {
	responses *response.Manager
	failures  *authlimit.Limiter
	log       *slog.Logger
	// names is shared by every response: a tool's name is a function of its toolkit and
	// function alone, so one map serves all (it holds one entry per function ever listed).
	names agentmcp.Names
	mcp   http.Handler
}

// New returns the gateway's handler.
//
// One MCP server serves every response: the response is the one the request's credential
// names, resolved per request before the SDK sees it, and tools/list and tools/call read its
// native catalog as it stands at that request. So nothing is built or cached per response,
// nothing needs dropping when a response closes, and a catalog rebound between model attempts
// shows at the next request.
func New(cfg Config) (*Gateway, error) {
	switch {
	case cfg.Responses == nil:
		return nil, errors.New("mcpgateway: Config.Responses is required")
	case cfg.Failures == nil:
		return nil, errors.New("mcpgateway: Config.Failures is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	g := &Gateway{responses: cfg.Responses, failures: cfg.Failures, log: cfg.Logger}
	server := sdk.NewServer(&sdk.Implementation{Name: serverName, Version: buildinfo.Read().Version}, &sdk.ServerOptions{
		Instructions: instructions,
		// Tools without listChanged (a stateless server has no stream to announce on), and
		// the Tasks extension (tasks.go), which initialize leaves out (see tools).
		Capabilities: &sdk.ServerCapabilities{
			Tools:      &sdk.ToolCapabilities{},
			Extensions: map[string]any{agentmcp.TasksExtension: map[string]any{}},
		},
		Logger: cfg.Logger,
	})
	if err := g.registerTasks(server); err != nil {
		return nil, err
	}
	server.AddReceivingMiddleware(g.tools)
	g.mcp = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, &sdk.StreamableHTTPOptions{
		Stateless: true,
		// One JSON answer per POST: no stream to keep open through proxies.
		JSONResponse:        true,
		MaxRequestBodyBytes: MaxBodyBytes,
		// A 2026-07-28 call's wait ends when its HTTP request does; older revisions' waits are
		// tied to it by tools (see callerGone).
		PropagateRequestCancellation: true,
		Logger:                       cfg.Logger,
	})
	return g, nil
}

// caller is what an authenticated request carries to the MCP handlers: its response, and the
// HTTP request's context, whose end stops the request's waits.
type caller struct {
	r   *response.Response
	ctx context.Context
}

type callerKey struct{}

// ServeHTTP authenticates the request, then lets the SDK serve it. The SDK's handlers run in
// contexts derived from the request's, so they find the caller there.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r, ok := g.authenticate(req)
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		if retry, limited := g.failures.FailHTTP(req); limited {
			w.Header().Set("Retry-After", authlimit.RetryAfter(retry))
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"detail":"` + authlimit.Message(retry) + `"}`))
			return
		}
		w.Header().Set("WWW-Authenticate", "Bearer")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(unauthorizedBody))
		return
	}
	ctx := context.WithValue(req.Context(), callerKey{}, caller{r: r, ctx: req.Context()})
	g.mcp.ServeHTTP(w, req.WithContext(ctx))
}

// authenticate returns the response whose gateway MCP credential the request presents.
func (g *Gateway) authenticate(req *http.Request) (*response.Response, bool) {
	token, ok := bearer.FromHeader(req.Header)
	if !ok {
		return nil, false
	}
	return g.responses.AuthenticateMCP(token)
}
