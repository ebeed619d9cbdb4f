package operator

import (
	"context"
	"errors"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/secretmask"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/store"
	"strings"
)

// CallApprovals is the engine behind the call approval methods: it keeps the Agent CLI calls
// that wait for a person's confirmation and runs a call once approved. Approve and Deny return
// the record as the decision left it; Approve refuses a person who may not approve
// (response.CheckCallApprover); store.ErrNotFound for an id that names nothing, and
// store.ErrConflict when the record is no longer waiting (a replay), in which case nothing
// changed. *response.CallApprovals implements it.
type CallApprovals interface {
	ListCallApprovals(ctx context.Context, f store.CallApprovalFilter) ([]store.CallApproval, error)
	CallApproval(ctx context.Context, id int64) (store.CallApproval, error)
	Approve(ctx context.Context, id int64, by store.Operator) (store.CallApproval, error)
	Deny(ctx context.Context, id int64, actor, note string) (store.CallApproval, error)
}

// ListCallApprovals implements OperatorService.
func (s *Server) ListCallApprovals(ctx context.Context, req *operatorv1.ListCallApprovalsRequest) (*operatorv1.ListCallApprovalsResponse, error) {
	if _, err := caller(ctx, false, ""); err != nil {
		return nil, err
	}
	st, ok := callApprovalStatusFromProto[req.GetStatus()]
	if !ok {
		return nil, fault.New(fault.InvalidArgument, "status is not a call approval status")
	}
	channel, thread, err := conversationFilter(req.GetConversation())
	if err != nil {
		return nil, err
	}
	pg, limit, before, err := idPage("call_approvals", req.GetPageSize(), req.GetPageToken(), string(st), channel, thread)
	if err != nil {
		return nil, err
	}
	list, err := s.callApprovals.ListCallApprovals(ctx, store.CallApprovalFilter{Status: st, Channel: channel, Thread: thread, BeforeID: before, Limit: limit})
	if err != nil {
		return nil, err
	}
	resp := &operatorv1.ListCallApprovalsResponse{}
	resp.CallApprovals, resp.NextPageToken = encodeIDPage(pg, limit, list, func(c store.CallApproval) int64 { return c.ID }, callApprovalToProto)
	return resp, nil
}

// GetCallApproval implements OperatorService.
func (s *Server) GetCallApproval(ctx context.Context, req *operatorv1.GetCallApprovalRequest) (*operatorv1.GetCallApprovalResponse, error) {
	if _, err := caller(ctx, false, ""); err != nil {
		return nil, err
	}
	c, err := readRecord(req.GetCallApprovalId(), "call approval", func(id int64) (store.CallApproval, error) {
		return s.callApprovals.CallApproval(ctx, id)
	})
	if err != nil {
		return nil, err
	}
	return &operatorv1.GetCallApprovalResponse{CallApproval: callApprovalToProto(c)}, nil
}

// DecideCallApproval implements OperatorService. Only an admin may approve (the engine's rule,
// response.CheckCallApprover); the role is checked before anything else about the request.
func (s *Server) DecideCallApproval(ctx context.Context, req *operatorv1.DecideCallApprovalRequest) (*operatorv1.DecideCallApprovalResponse, error) {
	d := req.GetDecision()
	op, err := caller(ctx, false, "")
	if err != nil {
		return nil, err
	}
	if d == operatorv1.Decision_DECISION_APPROVE {
		if err := response.CheckCallApprover(op); err != nil {
			return nil, err
		}
	}
	if len(req.GetNote()) > store.MaxApprovalComment {
		return nil, fault.Newf(fault.InvalidArgument, "note is %d bytes; at most %d are allowed", len(req.GetNote()), store.MaxApprovalComment)
	}
	note := strings.TrimSpace(req.GetNote())
	switch d {
	case operatorv1.Decision_DECISION_APPROVE:
		if note != "" {
			return nil, fault.New(fault.InvalidArgument, "an approval takes no note")
		}
	case operatorv1.Decision_DECISION_DENY:
	default:
		return nil, fault.Newf(fault.InvalidArgument, "a call approval takes DECISION_APPROVE or DECISION_DENY, not %s", d)
	}
	id, ok := storeID(req.GetCallApprovalId())
	if !ok {
		return nil, notFound("call approval", req.GetCallApprovalId())
	}
	var c store.CallApproval
	if d == operatorv1.Decision_DECISION_APPROVE {
		c, err = s.callApprovals.Approve(ctx, id, op)
	} else {
		c, err = s.callApprovals.Deny(ctx, id, op.Name, note)
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, notFound("call approval", req.GetCallApprovalId())
	case errors.Is(err, store.ErrConflict):
		if now, rerr := s.callApprovals.CallApproval(ctx, id); rerr == nil && now.Status == store.CallApprovalExpired {
			return nil, fault.Newf(fault.Conflict, "call approval %d expired: nobody decided it in time", id)
		} else if rerr == nil {
			return nil, fault.Newf(fault.Conflict, "call approval %d was already decided: %s", id, now.Status)
		}
		return nil, fault.Newf(fault.Conflict, "call approval %d was already decided", id)
	case err != nil:
		return nil, err
	}
	s.logger.Info("call approval decided", "operator", op.Name, "call_approval", id, "decision", d.String(), "status", string(c.Status))
	return &operatorv1.DecideCallApprovalResponse{CallApproval: callApprovalToProto(c)}, nil
}

var callApprovalStatusFromProto = map[operatorv1.CallApprovalStatus]store.CallApprovalStatus{
	operatorv1.CallApprovalStatus_CALL_APPROVAL_STATUS_UNSPECIFIED: "",
	operatorv1.CallApprovalStatus_CALL_APPROVAL_STATUS_WAITING:     store.CallApprovalWaiting,
	operatorv1.CallApprovalStatus_CALL_APPROVAL_STATUS_APPROVED:    store.CallApprovalApproved,
	operatorv1.CallApprovalStatus_CALL_APPROVAL_STATUS_CLAIMED:     store.CallApprovalClaimed,
	operatorv1.CallApprovalStatus_CALL_APPROVAL_STATUS_DONE:        store.CallApprovalDone,
	operatorv1.CallApprovalStatus_CALL_APPROVAL_STATUS_INTERRUPTED: store.CallApprovalInterrupted,
	operatorv1.CallApprovalStatus_CALL_APPROVAL_STATUS_DENIED:      store.CallApprovalDenied,
	operatorv1.CallApprovalStatus_CALL_APPROVAL_STATUS_EXPIRED:     store.CallApprovalExpired,
}

var callResultFromName = map[string]operatorv1.CallStatus{
	"completed": operatorv1.CallStatus_CALL_STATUS_COMPLETED,
	"failed":    operatorv1.CallStatus_CALL_STATUS_FAILED,
	"cancelled": operatorv1.CallStatus_CALL_STATUS_CANCELLED,
}

func callApprovalToProto(c store.CallApproval) *operatorv1.CallApproval {
	return &operatorv1.CallApproval{
		Id:            uint64(c.ID),
		Status:        protoOf(callApprovalStatusFromProto, c.Status),
		CallId:        c.CallID,
		Toolkit:       c.Toolkit,
		Function:      c.Function,
		ArgumentsJson: secretmask.MaskJSON(string(c.Arguments), nil),
		BashCallId:    c.BashCallID,
		ResponseId:    c.ResponseID,
		Agent:         c.Agent,
		Requester:     c.Requester,
		Conversation:  conversationToProto(c.Channel, c.Thread),
		Location:      &operatorv1.Location{WorkerKey: c.WorkerKey},
		CreatedAt:     timestamp(c.CreatedAt),
		DecidedBy:     c.DecidedBy,
		DecidedAt:     timestamp(c.DecidedAt),
		Note:          c.Note,
		ClaimedAt:     timestamp(c.ClaimedAt),
		ResultStatus:  callResultFromName[c.Result.Status],
		OutcomeJson:   secretmask.MaskJSON(string(c.Result.Outcome), nil),
		SettledAt:     timestamp(c.SettledAt),
	}
}
