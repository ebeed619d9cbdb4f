package operator

import (
	"context"
	"errors"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/interaction"
	"github.com/turncli/turncli/primary/store"
)

// Prompts is the engine behind the prompt methods: it keeps the prompts of request_approval
// and permission_prompt and hands decisions to the calls waiting on them.
type Prompts interface {
	// ListPrompts returns the prompts matching f, newest first.
	ListPrompts(ctx context.Context, f store.PromptFilter) ([]store.Prompt, error)
	// Prompt returns one prompt; store.ErrNotFound when it does not exist.
	Prompt(ctx context.Context, id int64) (store.Prompt, error)
	// DecidePrompt records by's decision on a pending prompt and wakes the call waiting on it.
	// store.ErrNotFound for an unknown id; store.ErrInvalid for an action the prompt's kind
	// does not take, a comment without text or an over-long text; store.ErrForbidden when by
	// may not take the action; store.ErrConflict when the prompt is no longer pending, in
	// which case nothing changed.
	DecidePrompt(ctx context.Context, id int64, by store.Operator, d interaction.PromptDecision) (store.Prompt, error)
}

// ListPrompts implements OperatorService.
func (s *Server) ListPrompts(ctx context.Context, req *operatorv1.ListPromptsRequest) (*operatorv1.ListPromptsResponse, error) {
	if _, err := caller(ctx, false, ""); err != nil {
		return nil, err
	}
	st, ok := promptStatusFromProto[req.GetStatus()]
	if !ok {
		return nil, fault.New(fault.InvalidArgument, "status is not a prompt status")
	}
	kind, ok := promptKindFromProto[req.GetKind()]
	if !ok {
		return nil, fault.New(fault.InvalidArgument, "kind must be PROMPT_KIND_APPROVAL, PROMPT_KIND_PERMISSION or unset")
	}
	channel, thread, err := conversationFilter(req.GetConversation())
	if err != nil {
		return nil, err
	}
	pg, limit, before, err := idPage("prompts", req.GetPageSize(), req.GetPageToken(), string(st), string(kind), channel, thread)
	if err != nil {
		return nil, err
	}
	list, err := s.prompts.ListPrompts(ctx, store.PromptFilter{Status: st, Kind: kind, Channel: channel, Thread: thread, BeforeID: before, Limit: limit})
	if err != nil {
		return nil, err
	}
	resp := &operatorv1.ListPromptsResponse{}
	resp.Prompts, resp.NextPageToken = encodeIDPage(pg, limit, list, func(p store.Prompt) int64 { return p.ID }, promptToProto)
	return resp, nil
}

// GetPrompt implements OperatorService.
func (s *Server) GetPrompt(ctx context.Context, req *operatorv1.GetPromptRequest) (*operatorv1.GetPromptResponse, error) {
	if _, err := caller(ctx, false, ""); err != nil {
		return nil, err
	}
	p, err := readRecord(req.GetPromptId(), "prompt", func(id int64) (store.Prompt, error) {
		return s.prompts.Prompt(ctx, id)
	})
	if err != nil {
		return nil, err
	}
	return &operatorv1.GetPromptResponse{Prompt: promptToProto(p)}, nil
}

// DecidePrompt implements OperatorService. Allowing a tool for a whole conversation is for
// admins only; the role is checked before anything else about the request.
func (s *Server) DecidePrompt(ctx context.Context, req *operatorv1.DecidePromptRequest) (*operatorv1.DecidePromptResponse, error) {
	d := req.GetDecision()
	op, err := caller(ctx, d == operatorv1.Decision_DECISION_ALLOW_CONVERSATION, "allow a tool for a whole conversation")
	if err != nil {
		return nil, err
	}
	action, ok := promptDecisionFromProto[d]
	if !ok {
		return nil, fault.Newf(fault.InvalidArgument, "%s; %s; not %s",
			promptDecisions(store.PromptApproval), promptDecisions(store.PromptPermission), d)
	}
	id, ok := storeID(req.GetPromptId())
	if !ok {
		return nil, notFound("prompt", req.GetPromptId())
	}
	p, err := s.prompts.DecidePrompt(ctx, id, op, interaction.PromptDecision{Action: action, Text: req.GetText()})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, notFound("prompt", req.GetPromptId())
	case errors.Is(err, store.ErrInvalid):
		// A decision the prompt's kind does not take is refused naming the ones it takes, as the
		// request spells them.
		if now, rerr := s.prompts.Prompt(ctx, id); rerr == nil && !store.DecisionFits(now.Kind, action) {
			return nil, fault.Newf(fault.InvalidArgument, "%s, not %s", promptDecisions(now.Kind), d)
		}
		return nil, err
	case errors.Is(err, store.ErrConflict):
		// A replay names the state the prompt is in, read after the refusal.
		if now, rerr := s.prompts.Prompt(ctx, id); rerr == nil {
			return nil, fault.Newf(fault.Conflict, "prompt %d can no longer be decided: it is %s", id, now.Status)
		}
		return nil, fault.Newf(fault.Conflict, "prompt %d can no longer be decided", id)
	case err != nil:
		return nil, err
	}
	s.logger.Info("prompt decided", "operator", op.Name, "prompt", id, "action", action, "status", string(p.Status))
	return &operatorv1.DecidePromptResponse{Prompt: promptToProto(p)}, nil
}

// promptDecisions says which decisions a prompt of kind takes (store.DecisionFits).
func promptDecisions(kind store.PromptKind) string {
	if kind == store.PromptApproval {
		return "an approval request takes DECISION_APPROVE, DECISION_DENY or DECISION_COMMENT"
	}
	return "a permission prompt takes DECISION_ALLOW_ONCE, DECISION_ALLOW_THREAD, DECISION_ALLOW_CONVERSATION or DECISION_DENY"
}

var promptStatusFromProto = map[operatorv1.PromptStatus]store.PromptStatus{
	operatorv1.PromptStatus_PROMPT_STATUS_UNSPECIFIED: "",
	operatorv1.PromptStatus_PROMPT_STATUS_PENDING:     store.PromptPending,
	operatorv1.PromptStatus_PROMPT_STATUS_APPROVED:    store.PromptApproved,
	operatorv1.PromptStatus_PROMPT_STATUS_DENIED:      store.PromptDenied,
	operatorv1.PromptStatus_PROMPT_STATUS_EXPIRED:     store.PromptExpired,
}

var promptKindFromProto = map[operatorv1.PromptKind]store.PromptKind{
	operatorv1.PromptKind_PROMPT_KIND_UNSPECIFIED: "",
	operatorv1.PromptKind_PROMPT_KIND_APPROVAL:    store.PromptApproval,
	operatorv1.PromptKind_PROMPT_KIND_PERMISSION:  store.PromptPermission,
}

var promptDecisionFromProto = map[operatorv1.Decision]string{
	operatorv1.Decision_DECISION_APPROVE:            store.DecisionApprove,
	operatorv1.Decision_DECISION_DENY:               store.DecisionDeny,
	operatorv1.Decision_DECISION_COMMENT:            store.DecisionComment,
	operatorv1.Decision_DECISION_ALLOW_ONCE:         store.DecisionAllowOnce,
	operatorv1.Decision_DECISION_ALLOW_THREAD:       store.DecisionAllowThread,
	operatorv1.Decision_DECISION_ALLOW_CONVERSATION: store.DecisionAllowConversation,
}

func promptToProto(p store.Prompt) *operatorv1.Prompt {
	return &operatorv1.Prompt{
		Id:              uint64(p.ID),
		Kind:            protoOf(promptKindFromProto, p.Kind),
		Status:          protoOf(promptStatusFromProto, p.Status),
		Conversation:    conversationToProto(p.Channel, p.Thread),
		Requester:       p.Requester,
		Agent:           p.Agent,
		ResponseId:      p.ResponseID,
		CallId:          p.CallID,
		Title:           p.Title,
		Details:         p.Details,
		ApproveLabel:    p.ApproveLabel,
		DenyLabel:       p.DenyLabel,
		ToolName:        p.ToolName,
		ToolUseId:       p.ToolUseID,
		MaskedInputJson: string(p.MaskedInput),
		CreatedAt:       timestamp(p.CreatedAt),
		Deadline:        timestamp(p.Deadline),
		DecidedBy:       p.DecidedBy,
		DecidedAt:       timestamp(p.DecidedAt),
		Decision:        protoOf(promptDecisionFromProto, p.Decision),
		Feedback:        p.Feedback,
	}
}
