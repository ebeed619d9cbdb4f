package mcpgateway

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	agentmcp "github.com/turncli/turncli/client/mcp"
	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/response"
)

// receiptWait is how long one long poll of a call's receipt lasts; the call is waited for, a
// poll after another, for as long as its request lives.
const receiptWait = time.Minute

// callTool answers tools/call: a native call of the response with a fresh call id, waited for
// until it is terminal, answered as `mindroom-agent mcp` answers (see client/mcp's CALLS help).
// A refusal of the call (an unknown function, a limit, a fence, a rebuild) is a result with
// isError, as the model can act on it. A call of a request that declares the Tasks extension
// is not waited for: its admitted receipt is answered as a task (tasks.go).
func (g *Gateway) callTool(ctx context.Context, r *response.Response, params *sdk.CallToolParamsRaw, version string) (sdk.Result, error) {
	if params == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tools/call needs params"}
	}
	toolkit, function, ok := g.names.Lookup(params.Name)
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Unknown tool " + quote(params.Name) + ": list the tools first"}
	}
	args, err := arguments(params.Arguments)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	ctx = withMetaTrace(ctx, params.Meta)
	// A version 7 id: its time is the creation of the task the call may be.
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	rc, err := r.CallNative(ctx, response.CallRequest{ID: id, Toolkit: toolkit, Function: function, Arguments: args})
	if err == nil && asTask(version, params) {
		return taskCreated(rc), nil
	}
	for err == nil && !rc.Status.Terminal() {
		if ctx.Err() != nil { // the caller went away; the call goes on, its receipt stays readable
			return nil, ctx.Err()
		}
		rc, err = r.Receipt(ctx, id, receiptWait)
	}
	switch {
	case response.ErrClosed(err):
		return nil, errEnded
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		if _, known := fault.KindOf(err); !known {
			err = fault.Hidden(fault.Hide(ctx, g.log, err, "MCP gateway call failed", "response_id", r.ID(), "call_id", id.String()), fault.InternalText)
		}
		_, msg, _ := fault.Public(err)
		return toolError(msg, id.String()), nil
	}
	return callResult(rc, version)
}

// arguments reads a call's arguments as the native path does: one strict JSON object (absent
// or null means {}), returned as canonical JSON.
func arguments(raw []byte) ([]byte, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return []byte("{}"), nil
	}
	obj, err := canonjson.ParseObject(raw)
	if err != nil {
		return nil, fault.Newf(fault.InvalidArgument, "arguments must be one strict JSON object: %v", err)
	}
	return canonjson.Marshal(obj)
}

// callResult is the tools/call result of a terminal receipt: the outcome as text (and as
// structuredContent when a completed call's outcome is an object), attachments as a second
// text, isError unless it completed, the call id and status in _meta.
func callResult(rc response.ReceiptView, version string) (*sdk.CallToolResult, error) {
	outcome, err := canonjson.Parse(rc.Outcome)
	if err != nil {
		return nil, err
	}
	status := rc.Status.String()
	completed := rc.Status == response.Completed
	res := &sdk.CallToolResult{
		Content: []sdk.Content{&sdk.TextContent{Text: agentmcp.OutcomeText(outcome, status)}},
		IsError: !completed,
	}
	res.Meta = sdk.Meta{agentmcp.MetaCallID: rc.CallID, agentmcp.MetaStatus: status}
	if attachments, _ := canonjson.Parse(rc.Attachments); attachments != nil {
		if list, _ := attachments.([]any); len(list) > 0 {
			b, err := canonjson.Marshal(map[string]any{"attachments": list})
			if err != nil {
				return nil, err
			}
			res.Content = append(res.Content, &sdk.TextContent{Text: string(b)})
		}
	}
	if _, isObject := outcome.(map[string]any); isObject && completed && version >= structuredSince {
		// The canonical bytes, not the parsed value: its numbers are literals the SDK's
		// encoder would write as strings.
		res.StructuredContent = json.RawMessage(rc.Outcome)
	}
	return res, nil
}

// toolError is a tools/call result telling the model what went wrong.
func toolError(msg, callID string) *sdk.CallToolResult {
	res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: msg}}, IsError: true}
	res.Meta = sdk.Meta{agentmcp.MetaCallID: callID}
	return res
}

func quote(s string) string {
	b, _ := canonjson.Marshal(s)
	return string(b)
}
