package mcpgateway

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	agentmcp "github.com/turncli/turncli/client/mcp"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/telemetry"
	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/response"
)

const (
	serverName   = "mindroom-primary"
	instructions = "These are the tools of one agent response, served by its primary. TOOLKIT__FUNCTION is the function " +
		"TOOLKIT.FUNCTION; functions of the interaction toolkit keep their bare names. Every call is a call of the " +
		"response with its own call id, receipt, limits and approvals, and calls are refused once the response has ended."
	// codeAuthority is the JSON-RPC error of a request whose response ended while it was
	// served, the code `mindroom-agent mcp` gives an unavailable Agent CLI authority.
	codeAuthority = -32001
	// codeRefused is the JSON-RPC error of a listing the response refused, the code
	// `mindroom-agent mcp` gives a refused discovery request.
	codeRefused = -32002
	// describeParallelism bounds the describes of one listing in flight at once (each is an
	// admitted operation of the response, which allows 64).
	describeParallelism = 4
	// loadProbe is the function a describe names to load a deferred toolkit (as the client's):
	// the toolkit loads before the function is looked up, and the function does not exist.
	loadProbe = "mindroom-agent-load"
	// structuredSince is the first revision with structuredContent and tool titles.
	structuredSince = "2025-06-18"
)

// errEnded answers a request whose response closed after it was authenticated.
var errEnded = &jsonrpc.Error{Code: codeAuthority, Message: "MCP gateway authority is unavailable: the response has ended"}

// tools is the SDK middleware that answers tools/list and tools/call from the caller's
// response; every other method (initialize, server/discover, ping, the task methods) is the
// SDK's. It takes the Tasks extension out of initialize's capabilities: the extension is of
// MCP 2026-07-28, which has no handshake, and the handshake revisions have no way to use it.
func (g *Gateway) tools(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "initialize" {
			res, err := next(ctx, method, req)
			if init, ok := res.(*sdk.InitializeResult); ok && init.Capabilities != nil {
				caps := *init.Capabilities
				caps.Extensions = maps.Clone(caps.Extensions)
				delete(caps.Extensions, agentmcp.TasksExtension)
				init.Capabilities = &caps
			}
			return res, err
		}
		if method != "tools/list" && method != "tools/call" {
			return next(ctx, method, req)
		}
		c, ok := ctx.Value(callerKey{}).(caller)
		if !ok { // never: ServeHTTP authenticated the request
			return nil, errEnded
		}
		ctx, stop := callerGone(ctx, c.ctx)
		defer stop()
		ss, _ := req.GetSession().(*sdk.ServerSession)
		version := sessionVersion(ss)
		switch r := req.(type) {
		case *sdk.ListToolsRequest:
			return g.listTools(ctx, c.r, r.Params, version)
		case *sdk.CallToolRequest:
			return g.callTool(ctx, c.r, r.Params, version)
		}
		return next(ctx, method, req)
	}
}

// callerGone returns ctx, also ended when the HTTP request's context ends: the SDK ties only a
// 2026-07-28 request's handler to its HTTP request, and an older one's wait must end with it too.
func callerGone(ctx, httpCtx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(httpCtx, cancel)
	return ctx, func() { stop(); cancel() }
}

// listTools answers tools/list with the whole native catalog in one page: engines such as
// Claude Code and Codex read only the first.
func (g *Gateway) listTools(ctx context.Context, r *response.Response, params *sdk.ListToolsParams, version string) (sdk.Result, error) {
	if params != nil && params.Cursor != "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid cursor: this server lists every tool in one page"}
	}
	refs, err := g.functions(ctx, r)
	if err != nil {
		return nil, g.engineErr(ctx, err, "tools/list")
	}
	tools, err := g.describeAll(ctx, r, refs, version)
	if err != nil {
		return nil, g.engineErr(ctx, err, "tools/list")
	}
	// The SDK fills the cache fields of the lists it builds; this one is built here. It is
	// one response's (private), and a rebind may change it at any time (stale at once).
	return &sdk.ListToolsResult{Tools: tools, Cacheable: sdk.Cacheable{TTLMs: 0, CacheScope: "private"}}, nil
}

type ref struct{ toolkit, function string }

// listItem is a native discovery item (contract section 5).
type listItem struct {
	Toolkit  string `json:"toolkit"`
	Function string `json:"function"`
	Deferred bool   `json:"deferred"`
}

// functions returns the functions of the native catalog. A deferred toolkit is loaded (by a
// describe, as a call would load it) and the catalog read again, so that its functions take its
// place; one that stays deferred is left out.
func (g *Gateway) functions(ctx context.Context, r *response.Response) ([]ref, error) {
	tried := map[string]bool{}
	for {
		items, err := nativeItems(r)
		if err != nil {
			return nil, err
		}
		var refs []ref
		var load []string
		for _, it := range items {
			switch {
			case !it.Deferred:
				refs = append(refs, ref{it.Toolkit, it.Function})
			case !tried[it.Toolkit]:
				load = append(load, it.Toolkit)
			default:
				g.log.Warn("left out a deferred toolkit that did not load", "response_id", r.ID(), "toolkit", it.Toolkit)
			}
		}
		if len(load) == 0 {
			return refs, nil
		}
		for _, toolkit := range load {
			tried[toolkit] = true
			if _, err := r.DescribeNative(ctx, toolkit, loadProbe); err != nil && !fault.Is(err, fault.InvalidArgument) {
				return nil, err
			}
		}
	}
}

// nativeItems reads every page of the native catalog.
func nativeItems(r *response.Response) ([]listItem, error) {
	var all []listItem
	cursor := ""
	for {
		page, err := r.ListNativeTools(cursor, catalog.MaxListLimit)
		if err != nil {
			return nil, err
		}
		var p struct {
			Items      []listItem `json:"items"`
			NextCursor *string    `json:"next_cursor"`
		}
		if err := json.Unmarshal(page, &p); err != nil {
			return nil, err
		}
		all = append(all, p.Items...)
		if p.NextCursor == nil {
			return all, nil
		}
		cursor = *p.NextCursor
	}
}

// describeAll describes refs, a few at a time, in order. A function whose describe is refused
// as invalid (it went away, or its toolkit cannot load) is left out; any other failure fails
// the listing.
func (g *Gateway) describeAll(ctx context.Context, r *response.Response, refs []ref, version string) ([]*sdk.Tool, error) {
	tools := make([]*sdk.Tool, len(refs))
	errs := make([]error, len(refs))
	sem := make(chan struct{}, describeParallelism)
	var wg sync.WaitGroup
	for i, f := range refs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			tools[i], errs[i] = g.tool(ctx, r, f, version)
		})
	}
	wg.Wait()
	out := make([]*sdk.Tool, 0, len(refs))
	for i, err := range errs {
		switch {
		case err == nil:
			out = append(out, tools[i])
		case fault.Is(err, fault.InvalidArgument):
			g.log.Warn("left out a function whose describe was refused", "response_id", r.ID(),
				"toolkit", refs[i].toolkit, "function", refs[i].function, "detail", err.Error())
		default:
			return nil, err
		}
	}
	return out, nil
}

// tool is the tools/list entry of f, from its native descriptor: its description followed by
// its instructions (as `mindroom-agent mcp` shows them), its input schema with "type":"object"
// added when it has no type, and the annotations client/mcp gives every tool.
func (g *Gateway) tool(ctx context.Context, r *response.Response, f ref, version string) (*sdk.Tool, error) {
	d, err := r.DescribeNative(ctx, f.toolkit, f.function)
	if err != nil {
		return nil, err
	}
	var desc struct {
		Description  string                     `json:"description"`
		InputSchema  map[string]json.RawMessage `json:"input_schema"`
		Instructions []string                   `json:"instructions"`
	}
	if err := json.Unmarshal(d.Descriptor, &desc); err != nil {
		return nil, err
	}
	text := desc.Description
	if len(desc.Instructions) > 0 {
		text = strings.TrimSpace(text + "\n\n" + strings.Join(desc.Instructions, "\n"))
	}
	schema := desc.InputSchema
	if schema == nil {
		schema = map[string]json.RawMessage{}
	}
	if _, typed := schema["type"]; !typed {
		schema["type"] = json.RawMessage(`"object"`)
	}
	tool := &sdk.Tool{Name: g.names.Name(f.toolkit, f.function), Description: text, InputSchema: schema}
	if version >= structuredSince {
		tool.Title = f.toolkit + "." + f.function
	}
	if version >= agentmcp.AnnotationsSince {
		if tool.Annotations, err = annotations(f); err != nil {
			return nil, err
		}
	}
	return tool, nil
}

// annotations are client/mcp's annotations of f, in the SDK's type (which writes every hint
// out, false ones included).
func annotations(f ref) (*sdk.ToolAnnotations, error) {
	b, err := json.Marshal(agentmcp.Annotations(f.toolkit, f.function))
	if err != nil {
		return nil, err
	}
	a := &sdk.ToolAnnotations{}
	return a, json.Unmarshal(b, a)
}

// engineErr is the JSON-RPC error of a failed discovery: the response's end as codeAuthority,
// a refusal (the catalog being rebuilt, a limit) as codeRefused with its message, an internal
// fault as -32603 naming the id of the log line that records it.
func (g *Gateway) engineErr(ctx context.Context, err error, method string) error {
	if response.ErrClosed(err) {
		return errEnded
	}
	if _, ok := fault.KindOf(err); !ok {
		err = fault.Hidden(fault.Hide(ctx, g.log, err, "MCP gateway request failed", "method", method), fault.InternalText)
	}
	kind, msg, _ := fault.Public(err)
	if kind == fault.Internal {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}
	}
	return &jsonrpc.Error{Code: codeRefused, Message: msg}
}

// withMetaTrace returns ctx continuing the trace a request's _meta names (traceparent and
// tracestate, as MCP's SEP-414 proposes and `mindroom-agent mcp` reads), which then takes the
// place of the HTTP request's.
func withMetaTrace(ctx context.Context, meta sdk.Meta) context.Context {
	parent, _ := meta["traceparent"].(string)
	if parent == "" {
		return ctx
	}
	state, _ := meta["tracestate"].(string)
	return telemetry.Extract(ctx, parent, state)
}
