package responseapi

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/durationpb"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/agentclihttp"
	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/response"
)

// The runtime's native tool calls: the response's native catalog, offered to the model as
// direct tool calls beside its shell (see response/native.go for what they are).

// MaxNativeWait is the longest wait a CallTool or GetToolCall may ask for: the Agent CLI's
// long-poll bound.
const MaxNativeWait = 60 * time.Second

var errNoCall = fault.New(fault.NotFound, "no call of this response has this id")

// ListTools lists a page of the native catalog.
func (s *Server) ListTools(_ context.Context, req *responsev1.ListToolsRequest) (*responsev1.ListToolsResponse, error) {
	r, err := s.get(req.GetResponseId())
	if err != nil {
		return nil, err
	}
	limit, err := nativeLimit(req.GetLimit(), catalog.DefaultListLimit, catalog.MaxListLimit)
	if err != nil {
		return nil, err
	}
	if len([]rune(req.GetCursor())) > catalog.MaxCursor {
		return nil, fault.Newf(fault.InvalidArgument, "cursor must be at most %d characters", catalog.MaxCursor)
	}
	page, err := r.ListNativeTools(req.GetCursor(), limit)
	if err != nil {
		return nil, engineErr(err)
	}
	var out struct {
		Items      []toolItem `json:"items"`
		NextCursor *string    `json:"next_cursor"`
	}
	if err := json.Unmarshal(page, &out); err != nil {
		return nil, engineErr(err)
	}
	res := &responsev1.ListToolsResponse{Items: itemsToProto(out.Items)}
	if out.NextCursor != nil {
		res.NextCursor = *out.NextCursor
	}
	return res, nil
}

// SearchTools searches the native catalog.
func (s *Server) SearchTools(_ context.Context, req *responsev1.SearchToolsRequest) (*responsev1.SearchToolsResponse, error) {
	r, err := s.get(req.GetResponseId())
	if err != nil {
		return nil, err
	}
	if !catalog.ValidQuery(req.GetQuery()) {
		return nil, fault.Newf(fault.InvalidArgument, "query must be 1 to %d characters", catalog.MaxQuery)
	}
	if tk := req.GetToolkit(); tk != "" && !catalog.ValidSelector(tk) {
		return nil, fault.Newf(fault.InvalidArgument, "toolkit must be 1 to %d characters", catalog.MaxSelector)
	}
	limit, err := nativeLimit(req.GetLimit(), catalog.DefaultSearchLimit, catalog.MaxSearchLimit)
	if err != nil {
		return nil, err
	}
	found, err := r.SearchNativeTools(req.GetQuery(), req.GetToolkit(), limit)
	if err != nil {
		return nil, engineErr(err)
	}
	var out struct {
		Items []toolItem `json:"items"`
	}
	if err := json.Unmarshal(found, &out); err != nil {
		return nil, engineErr(err)
	}
	return &responsev1.SearchToolsResponse{Items: itemsToProto(out.Items)}, nil
}

// DescribeTool describes a function of the native catalog.
func (s *Server) DescribeTool(ctx context.Context, req *responsev1.DescribeToolRequest) (*responsev1.DescribeToolResponse, error) {
	r, err := s.get(req.GetResponseId())
	if err != nil {
		return nil, err
	}
	if err := checkSelectors(req.GetToolkit(), req.GetFunction()); err != nil {
		return nil, err
	}
	d, err := r.DescribeNative(ctx, req.GetToolkit(), req.GetFunction())
	if err != nil {
		return nil, engineErr(err)
	}
	var desc struct {
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"input_schema"`
		Instructions []string        `json:"instructions"`
	}
	if err := json.Unmarshal(d.Descriptor, &desc); err != nil {
		return nil, engineErr(err)
	}
	return &responsev1.DescribeToolResponse{
		Toolkit: req.GetToolkit(), Function: req.GetFunction(), Description: desc.Description,
		InputSchemaJson: string(desc.InputSchema), Instructions: desc.Instructions, Traits: traitsToProto(d.Traits),
	}, nil
}

// CallTool admits a native call and returns its receipt, waiting first when asked.
func (s *Server) CallTool(ctx context.Context, req *responsev1.CallToolRequest) (*responsev1.CallToolResponse, error) {
	r, id, err := s.call(req.GetResponseId(), req.GetCallId())
	if err != nil {
		return nil, err
	}
	if err := checkSelectors(req.GetToolkit(), req.GetFunction()); err != nil {
		return nil, err
	}
	args, err := canonicalArguments(req.GetArgumentsJson())
	if err != nil {
		return nil, err
	}
	wait, err := nativeWait(req.GetWait())
	if err != nil {
		return nil, err
	}
	rc, err := r.CallNative(ctx, response.CallRequest{ID: id, Toolkit: req.GetToolkit(), Function: req.GetFunction(), Arguments: args})
	if err != nil {
		return nil, engineErr(err)
	}
	if wait > 0 && !rc.Status.Terminal() {
		if rc, err = r.Receipt(ctx, id, wait); err != nil {
			return nil, engineErr(err)
		}
	}
	return &responsev1.CallToolResponse{Receipt: receiptToProto(rc)}, nil
}

// GetToolCall returns a receipt of the response, long-polling when asked.
func (s *Server) GetToolCall(ctx context.Context, req *responsev1.GetToolCallRequest) (*responsev1.GetToolCallResponse, error) {
	r, id, err := s.call(req.GetResponseId(), req.GetCallId())
	if err != nil {
		return nil, err
	}
	wait, err := nativeWait(req.GetWait())
	if err != nil {
		return nil, err
	}
	if !r.HasCall(id) {
		return nil, errNoCall
	}
	rc, err := r.Receipt(ctx, id, wait)
	if err != nil {
		return nil, engineErr(err)
	}
	return &responsev1.GetToolCallResponse{Receipt: receiptToProto(rc)}, nil
}

// call finds the response and reads the call id a native call or receipt read names.
func (s *Server) call(responseID, callID string) (*response.Response, uuid.UUID, error) {
	r, err := s.get(responseID)
	if err != nil {
		return nil, uuid.UUID{}, err
	}
	id, err := uuid.Parse(callID)
	if err != nil {
		return nil, uuid.UUID{}, fault.New(fault.InvalidArgument, "call_id must be a UUID")
	}
	return r, id, nil
}

// canonicalArguments reads a call's arguments as the Agent CLI does: one strict JSON object of
// at most 64 KiB (empty means {}), returned as canonical JSON.
func canonicalArguments(raw string) ([]byte, error) {
	if raw == "" {
		return []byte("{}"), nil
	}
	if len(raw) > agentclihttp.MaxOperationBytes {
		return nil, fault.Newf(fault.InvalidArgument, "arguments_json exceeds %d bytes", agentclihttp.MaxOperationBytes)
	}
	obj, err := canonjson.ParseObject([]byte(raw))
	if err != nil {
		return nil, fault.Newf(fault.InvalidArgument, "arguments_json must be one strict JSON object: %v", err)
	}
	args, err := canonjson.Marshal(obj)
	if err != nil {
		return nil, fault.Newf(fault.InvalidArgument, "arguments_json: %v", err)
	}
	return args, nil
}

func checkSelectors(toolkit, function string) error {
	if !catalog.ValidSelector(toolkit) || !catalog.ValidSelector(function) {
		return fault.Newf(fault.InvalidArgument, "toolkit and function must be 1 to %d characters each", catalog.MaxSelector)
	}
	return nil
}

// nativeLimit applies a listing's default (for 0) and bounds.
func nativeLimit(n uint32, def, maxN int) (int, error) {
	switch {
	case n == 0:
		return def, nil
	case n > uint32(maxN):
		return 0, fault.Newf(fault.InvalidArgument, "limit must be from 1 to %d", maxN)
	}
	return int(n), nil
}

func nativeWait(d *durationpb.Duration) (time.Duration, error) {
	if d == nil {
		return 0, nil
	}
	if err := d.CheckValid(); err != nil || d.AsDuration() < 0 || d.AsDuration() > MaxNativeWait {
		return 0, fault.Newf(fault.InvalidArgument, "wait must be from 0 to %s", MaxNativeWait)
	}
	return d.AsDuration(), nil
}

// toolItem is a discovery item as the catalog writes it (contract section 5).
type toolItem struct {
	Toolkit     string `json:"toolkit"`
	Function    string `json:"function"`
	Description string `json:"description"`
	Deferred    bool   `json:"deferred"`
}

func itemsToProto(items []toolItem) []*responsev1.ToolItem {
	out := make([]*responsev1.ToolItem, len(items))
	for i, it := range items {
		out[i] = &responsev1.ToolItem{Toolkit: it.Toolkit, Function: it.Function, Description: it.Description, Deferred: it.Deferred}
	}
	return out
}

func traitsToProto(t catalog.Traits) *responsev1.FunctionTraits {
	return &responsev1.FunctionTraits{
		NeedsConfirmation: t.NeedsConfirmation, UserInput: t.UserInput,
		ExternalExecution: t.ExternalExecution, EndsTurn: t.EndsTurn,
	}
}
