package mcpgateway

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/turncli/turncli/client"
	agentmcp "github.com/turncli/turncli/client/mcp"
	"github.com/turncli/turncli/internal/clierr"
	"github.com/turncli/turncli/primary/response"
)

// This file serves the Tasks extension of MCP 2026-07-28 (io.modelcontextprotocol/tasks) as
// `mindroom-agent mcp` does, with client/mcp's shapes: a tools/call whose request declares the
// extension is answered at once with a task, which is the native call's receipt (its id is the
// call id), and tasks/get reads the receipt, waiting a few seconds for it to settle, until it
// holds the CallToolResult tools/call would have given. tasks/cancel is acknowledged (a call is
// never cancelled by its caller) and tasks/update too (no task asks the client for input). A
// task lives as long as its receipt and is read through the response's own Receipt, so only
// the credential of the response that made the call reaches it; any other id is -32602.
//
// The SDK has the hooks for all of it, so the HTTP layer stays a plain authenticator: the task
// methods are registered as custom methods (AddReceivingCustomMethod), which its transport then
// accepts instead of refusing as unknown, and a tools/call as a task is answered by the tools
// middleware with a result of its own type, which the SDK passes through.
//
// The gateway keeps no state per task, so a task's lastUpdatedAt is when the answer read the
// receipt (never before the status it shows began), except at creation, when it is the call's.

// statelessVersion is the revision with the Tasks extension.
const statelessVersion = "2026-07-28"

// taskMethods are the extension's methods.
var taskMethods = []string{"tasks/get", "tasks/cancel", "tasks/update"}

// taskParams are the params of a task method.
type taskParams struct {
	sdk.ParamsBase
	TaskID         *string         `json:"taskId,omitempty"`
	InputResponses json.RawMessage `json:"inputResponses,omitempty"`
}

// taskAnswer is a result of the extension: a task, or the empty acknowledgement, as a JSON
// object, with the _meta the SDK adds.
type taskAnswer struct {
	sdk.ResultBase
	fields map[string]any
}

func (a *taskAnswer) MarshalJSON() ([]byte, error) {
	out := maps.Clone(a.fields)
	if out == nil {
		out = map[string]any{}
	}
	if len(a.Meta) > 0 {
		out["_meta"] = a.Meta
	}
	return json.Marshal(out)
}

// registerTasks adds the extension's methods to server.
func (g *Gateway) registerTasks(server *sdk.Server) error {
	for _, method := range taskMethods {
		err := sdk.AddReceivingCustomMethod(server, method, func(ctx context.Context, ss *sdk.ServerSession, p *taskParams) (*taskAnswer, error) {
			return g.taskMethod(ctx, method, sessionVersion(ss), p)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// asTask reports whether a tools/call of revision version with params is to be answered with
// a task: a 2026-07-28 request that declares the extension.
func asTask(version string, params *sdk.CallToolParamsRaw) bool {
	return version >= statelessVersion && params != nil && agentmcp.DeclaresTasks(params.Meta)
}

// taskCreated is the answer of a tools/call made as a task: the task of the receipt rc just
// admitted, whose status dates from the call's creation.
func taskCreated(rc response.ReceiptView) *taskAnswer {
	created, _ := client.TimedCallIDTime(rc.CallID)
	task := agentmcp.Task(rc.CallID, rc.Status.String(), created)
	task["resultType"] = "task"
	return &taskAnswer{fields: task}
}

// taskMethod answers a task method of revision version.
func (g *Gateway) taskMethod(ctx context.Context, method, version string, p *taskParams) (*taskAnswer, error) {
	c, ok := ctx.Value(callerKey{}).(caller)
	if !ok { // never: ServeHTTP authenticated the request
		return nil, errEnded
	}
	ctx, stop := callerGone(ctx, c.ctx)
	defer stop()
	if version < statelessVersion {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: " + method +
			" is part of the Tasks extension (" + agentmcp.TasksExtension + ") of MCP " + statelessVersion}
	}
	if p == nil || !agentmcp.DeclaresTasks(p.Meta) {
		msg, data := agentmcp.MissingTasks(method)
		raw, err := json.Marshal(data)
		if err != nil {
			return nil, err
		}
		return nil, &jsonrpc.Error{Code: agentmcp.CodeMissingCapability, Message: msg, Data: raw}
	}
	if p.TaskID == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: method + ` needs "taskId", a string`}
	}
	if method == "tasks/update" && len(p.InputResponses) > 0 && p.InputResponses[0] != '{' {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `"inputResponses" must be an object`}
	}
	notFound := &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: agentmcp.TaskNotFound}
	if _, timed := client.TimedCallIDTime(*p.TaskID); !timed {
		return nil, notFound
	}
	id, err := uuid.Parse(*p.TaskID)
	if err != nil {
		return nil, notFound
	}
	wait := time.Duration(0)
	if method == "tasks/get" {
		wait = agentmcp.TaskWait
	}
	rc, err := c.r.Receipt(ctx, id, wait)
	switch {
	case errors.Is(err, clierr.ErrUnauthenticated) || response.ErrClosed(err):
		notFound.Message += " (no call of this response has that id, or the response has ended)"
		return nil, notFound
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		return nil, g.engineErr(ctx, err, method)
	}
	switch method {
	case "tasks/cancel":
		g.log.Info("acknowledged tasks/cancel of a call that goes on: calls are never cancelled by their caller",
			"response_id", c.r.ID(), "call_id", rc.CallID)
		return &taskAnswer{fields: map[string]any{"resultType": "complete"}}, nil
	case "tasks/update":
		return &taskAnswer{fields: map[string]any{"resultType": "complete"}}, nil
	}
	task := agentmcp.Task(rc.CallID, rc.Status.String(), time.Now())
	if rc.Status.Terminal() {
		res, err := callResult(rc, version)
		if err != nil {
			return nil, err
		}
		task["result"] = res
	}
	task["resultType"] = "complete"
	return &taskAnswer{fields: task}, nil
}

// sessionVersion is the revision of the request a stateless session serves.
func sessionVersion(ss *sdk.ServerSession) string {
	if ss == nil || ss.InitializeParams() == nil {
		return ""
	}
	return ss.InitializeParams().ProtocolVersion
}
