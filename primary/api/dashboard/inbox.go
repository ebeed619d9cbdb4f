package dashboard

import (
	"context"
	"strings"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/fault"
)

// inboxData is everything waiting for a person: what anyone may decide, and the question
// forms put to the signed-in operator.
type inboxData struct {
	Approvals     []*operatorv1.Approval
	CallApprovals []*operatorv1.CallApproval
	Prompts       []*operatorv1.Prompt
	Questions     []*operatorv1.QuestionForm
}

func (d inboxData) Empty() bool {
	return len(d.Approvals)+len(d.CallApprovals)+len(d.Prompts)+len(d.Questions) == 0
}

func (s *Server) loadInbox(q *request) (inboxData, error) {
	var d inboxData
	approvals, err := s.op.ListApprovals(q.ctx, &operatorv1.ListApprovalsRequest{Status: operatorv1.ApprovalStatus_APPROVAL_STATUS_PENDING})
	if err != nil {
		return d, err
	}
	calls, err := s.op.ListCallApprovals(q.ctx, &operatorv1.ListCallApprovalsRequest{Status: operatorv1.CallApprovalStatus_CALL_APPROVAL_STATUS_WAITING})
	if err != nil {
		return d, err
	}
	prompts, err := s.op.ListPrompts(q.ctx, &operatorv1.ListPromptsRequest{Status: operatorv1.PromptStatus_PROMPT_STATUS_PENDING})
	if err != nil {
		return d, err
	}
	questions, err := s.op.ListQuestions(q.ctx, &operatorv1.ListQuestionsRequest{Status: operatorv1.QuestionStatus_QUESTION_STATUS_PENDING, Requester: q.s.name})
	if err != nil {
		return d, err
	}
	return inboxData{Approvals: approvals.GetApprovals(), CallApprovals: calls.GetCallApprovals(), Prompts: prompts.GetPrompts(), Questions: questions.GetQuestions()}, nil
}

// decisions are the form values of the decision buttons. Which one a record takes, and who
// may take it, the server decides.
var decisions = map[string]operatorv1.Decision{
	"approve":            operatorv1.Decision_DECISION_APPROVE,
	"deny":               operatorv1.Decision_DECISION_DENY,
	"comment":            operatorv1.Decision_DECISION_COMMENT,
	"allow_once":         operatorv1.Decision_DECISION_ALLOW_ONCE,
	"allow_thread":       operatorv1.Decision_DECISION_ALLOW_THREAD,
	"allow_conversation": operatorv1.Decision_DECISION_ALLOW_CONVERSATION,
}

func (q *request) decision() (operatorv1.Decision, string, error) {
	d, ok := decisions[q.r.PostFormValue("decision")]
	if !ok {
		return 0, "", fault.New(fault.InvalidArgument, "choose a decision")
	}
	// Approving takes no text on the API; a comment typed before clicking Approve is dropped.
	text := strings.TrimSpace(q.r.PostFormValue("text"))
	if d == operatorv1.Decision_DECISION_APPROVE {
		text = ""
	}
	return d, text, nil
}

// decide answers a decision button of the inbox: call makes the decision on the server.
func (s *Server) decide(call func(ctx context.Context, id uint64, d operatorv1.Decision, text string) error) func(*request) error {
	return func(q *request) error {
		id, err := q.id()
		if err != nil {
			return err
		}
		d, text, err := q.decision()
		if err != nil {
			return err
		}
		if err := call(q.ctx, id, d, text); err != nil {
			return err
		}
		return s.redirect(q, "/ui/inbox", "Decision saved: "+shortEnum(d)+".")
	}
}

func (s *Server) decideApproval(ctx context.Context, id uint64, d operatorv1.Decision, text string) error {
	_, err := s.op.DecideApproval(ctx, &operatorv1.DecideApprovalRequest{ApprovalId: id, Decision: d, Text: text})
	return err
}

func (s *Server) decidePrompt(ctx context.Context, id uint64, d operatorv1.Decision, text string) error {
	_, err := s.op.DecidePrompt(ctx, &operatorv1.DecidePromptRequest{PromptId: id, Decision: d, Text: text})
	return err
}

func (s *Server) decideCallApproval(ctx context.Context, id uint64, d operatorv1.Decision, note string) error {
	_, err := s.op.DecideCallApproval(ctx, &operatorv1.DecideCallApprovalRequest{CallApprovalId: id, Decision: d, Note: note})
	return err
}
