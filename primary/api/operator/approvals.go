package operator

import (
	"context"
	"errors"
	"google.golang.org/protobuf/types/known/durationpb"
	"strings"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/store"
)

// Approvals decides durable approvals: approving re-runs every gate and starts the saved
// command exactly once. Each method returns the approval as the decision left it;
// store.ErrNotFound for an id that names no approval, and store.ErrConflict when the
// approval is no longer pending (a replay), in which case nothing changed.
type Approvals interface {
	// Approve approves a pending approval as by, an admin: it re-runs every gate against the
	// current settings (conversation mode, caps, workdir) and starts the saved command once.
	// A gate that now refuses returns a fault.FailedPrecondition saying why (the engine's
	// ErrRefused, wrapped), shown to the operator as is.
	Approve(ctx context.Context, id int64, by store.Operator) (store.Approval, error)
	// Deny denies a pending approval as by, with a reason (may be empty).
	Deny(ctx context.Context, id int64, by store.Operator, reason string) (store.Approval, error)
	// Comment adds by's comment to a pending approval, which stays pending.
	Comment(ctx context.Context, id int64, by store.Operator, text string) (store.Approval, error)
}

// ListApprovals implements OperatorService.
func (s *Server) ListApprovals(ctx context.Context, req *operatorv1.ListApprovalsRequest) (*operatorv1.ListApprovalsResponse, error) {
	if _, err := caller(ctx, false, ""); err != nil {
		return nil, err
	}
	st, ok := approvalStatusFromProto[req.GetStatus()]
	if !ok {
		return nil, fault.New(fault.InvalidArgument, "status is not an approval status")
	}
	channel, thread, err := conversationFilter(req.GetConversation())
	if err != nil {
		return nil, err
	}
	pg, limit, before, err := idPage("approvals", req.GetPageSize(), req.GetPageToken(), string(st), channel, thread)
	if err != nil {
		return nil, err
	}
	list, err := s.store.ListApprovals(ctx, store.ApprovalFilter{Status: st, Channel: channel, Thread: thread, BeforeID: before, Limit: limit})
	if err != nil {
		return nil, err
	}
	resp := &operatorv1.ListApprovalsResponse{}
	resp.Approvals, resp.NextPageToken = encodeIDPage(pg, limit, list, func(a store.Approval) int64 { return a.ID }, approvalToProto)
	return resp, nil
}

// GetApproval implements OperatorService.
func (s *Server) GetApproval(ctx context.Context, req *operatorv1.GetApprovalRequest) (*operatorv1.GetApprovalResponse, error) {
	if _, err := caller(ctx, false, ""); err != nil {
		return nil, err
	}
	a, err := readRecord(req.GetApprovalId(), "approval", func(id int64) (store.Approval, error) { return s.store.Approval(ctx, id) })
	if err != nil {
		return nil, err
	}
	return &operatorv1.GetApprovalResponse{Approval: approvalToProto(a)}, nil
}

// DecideApproval implements OperatorService. Only an admin may approve; the role is checked
// before anything else about the request.
func (s *Server) DecideApproval(ctx context.Context, req *operatorv1.DecideApprovalRequest) (*operatorv1.DecideApprovalResponse, error) {
	d := req.GetDecision()
	op, err := caller(ctx, d == operatorv1.Decision_DECISION_APPROVE, "approve a background command")
	if err != nil {
		return nil, err
	}
	text, err := decisionText(d, req.GetText())
	if err != nil {
		return nil, err
	}
	id, ok := storeID(req.GetApprovalId())
	if !ok {
		return nil, notFound("approval", req.GetApprovalId())
	}
	var a store.Approval
	switch d {
	case operatorv1.Decision_DECISION_APPROVE:
		a, err = s.approvals.Approve(ctx, id, op)
	case operatorv1.Decision_DECISION_DENY:
		a, err = s.approvals.Deny(ctx, id, op, text)
	default:
		a, err = s.approvals.Comment(ctx, id, op, text)
	}
	if err != nil {
		return nil, s.decisionStatus(ctx, id, err)
	}
	s.logger.Info("approval decided", "operator", op.Name, "approval", id, "decision", d.String(), "status", string(a.Status))
	return &operatorv1.DecideApprovalResponse{Approval: approvalToProto(a)}, nil
}

// decisionText checks a decision and its text and returns the text to record, trimmed.
func decisionText(d operatorv1.Decision, text string) (string, error) {
	if len(text) > store.MaxApprovalComment {
		return "", fault.Newf(fault.InvalidArgument, "text is %d bytes; at most %d are allowed", len(text), store.MaxApprovalComment)
	}
	text = strings.TrimSpace(text)
	switch d {
	case operatorv1.Decision_DECISION_APPROVE:
		if text != "" {
			return "", fault.New(fault.InvalidArgument, "an approval takes no text; add a comment first, then approve")
		}
	case operatorv1.Decision_DECISION_DENY:
	case operatorv1.Decision_DECISION_COMMENT:
		if text == "" {
			return "", fault.New(fault.InvalidArgument, "a comment needs text")
		}
	default:
		return "", fault.Newf(fault.InvalidArgument, "an approval takes DECISION_APPROVE, DECISION_DENY or DECISION_COMMENT, not %s", d)
	}
	return text, nil
}

// decisionStatus words a decision's NOT_FOUND and ABORTED; a replay names the state the
// approval is in, read after the refusal. Other errors keep their kind.
func (s *Server) decisionStatus(ctx context.Context, id int64, err error) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return notFound("approval", uint64(id))
	case errors.Is(err, store.ErrConflict):
		if a, rerr := s.store.Approval(ctx, id); rerr == nil {
			return fault.Newf(fault.Conflict, "approval %d was already decided: %s", id, a.Status)
		}
		return fault.Newf(fault.Conflict, "approval %d was already decided", id)
	}
	return err
}

var approvalStatusFromProto = map[operatorv1.ApprovalStatus]store.ApprovalStatus{
	operatorv1.ApprovalStatus_APPROVAL_STATUS_UNSPECIFIED: "",
	operatorv1.ApprovalStatus_APPROVAL_STATUS_PENDING:     store.ApprovalPending,
	operatorv1.ApprovalStatus_APPROVAL_STATUS_EXECUTING:   store.ApprovalExecuting,
	operatorv1.ApprovalStatus_APPROVAL_STATUS_CONSUMED:    store.ApprovalConsumed,
	operatorv1.ApprovalStatus_APPROVAL_STATUS_FAILED:      store.ApprovalFailed,
	operatorv1.ApprovalStatus_APPROVAL_STATUS_DENIED:      store.ApprovalDenied,
}

func approvalStatusToProto(st store.ApprovalStatus) operatorv1.ApprovalStatus {
	for p, s := range approvalStatusFromProto {
		if s == st && s != "" {
			return p
		}
	}
	return operatorv1.ApprovalStatus_APPROVAL_STATUS_UNSPECIFIED
}

func approvalToProto(a store.Approval) *operatorv1.Approval {
	out := &operatorv1.Approval{
		Id:           uint64(a.ID),
		Status:       approvalStatusToProto(a.Status),
		Kind:         jobKindToProto(a.Kind),
		Conversation: conversationToProto(a.Channel, a.Thread),
		Author:       a.Author,
		Agent:        a.Agent,
		Location:     &operatorv1.Location{WorkerKey: a.WorkerKey},
		Command:      a.Command,
		Workdir:      a.Workdir,
		Ceiling:      durationpb.New(a.Ceiling),
		Label:        a.Label,
		CreatedAt:    timestamp(a.CreatedAt),
		DecidedBy:    a.DecidedBy,
		DecidedAt:    timestamp(a.DecidedAt),
		JobId:        uint64(max(a.JobID, 0)),
		Note:         a.Note,
		Comments:     make([]*operatorv1.ApprovalComment, 0, len(a.Comments)),
		SettledAt:    timestamp(a.SettledAt),
	}
	for _, c := range a.Comments {
		out.Comments = append(out.Comments, &operatorv1.ApprovalComment{Actor: c.Actor, Text: c.Text, At: timestamp(c.At)})
	}
	return out
}
