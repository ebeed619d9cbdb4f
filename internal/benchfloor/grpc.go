package benchfloor

import (
	"context"

	agentcliv1 "github.com/turncli/turncli/gen/turncli/agentcli/v1"
)

// GRPCEcho is the gRPC floor: AgentCLIService with handlers that only echo. Operate returns the
// operation document it was sent; GetCall returns a completed receipt-shaped document naming
// the call. Registered on a bare grpc.Server (no interceptors), it is a gRPC unary echo with the
// same messages as the primary's service.
type GRPCEcho struct {
	agentcliv1.UnimplementedAgentCLIServiceServer
}

// Operate echoes the operation.
func (GRPCEcho) Operate(_ context.Context, req *agentcliv1.OperateRequest) (*agentcliv1.OperateResponse, error) {
	return &agentcliv1.OperateResponse{CanonicalJson: req.GetOperationJson()}, nil
}

// GetCall answers with a completed receipt.
func (GRPCEcho) GetCall(_ context.Context, req *agentcliv1.GetCallRequest) (*agentcliv1.GetCallResponse, error) {
	body := `{"call_id":"` + req.GetCallId() + `","outcome":{},"status":"completed"}`
	return &agentcliv1.GetCallResponse{CanonicalJson: []byte(body)}, nil
}
