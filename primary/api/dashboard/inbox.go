package dashboard

import (
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

func (s *Server) inbox(q *request) error {
	d, err := s.loadInbox(q)
	if err != nil {
		return err
	}
	s.render(q, 200, "inbox", "Inbox", d)
	return nil
}

func (s *Server) inboxItems(q *request) error {
	d, err := s.loadInbox(q)
	if err != nil {
		return err
	}
	s.fragment(q, "inbox", "inbox-items", d)
	return nil
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

func (s *Server) decideApproval(q *request) error {
	id, err := q.id()
	if err != nil {
		return err
	}
	d, text, err := q.decision()
	if err != nil {
		return err
	}
	if _, err := s.op.DecideApproval(q.ctx, &operatorv1.DecideApprovalRequest{ApprovalId: id, Decision: d, Text: text}); err != nil {
		return err
	}
	return s.redirect(q, "/ui/inbox", "Decision saved: "+shortEnum(d)+".")
}

func (s *Server) decidePrompt(q *request) error {
	id, err := q.id()
	if err != nil {
		return err
	}
	d, text, err := q.decision()
	if err != nil {
		return err
	}
	if _, err := s.op.DecidePrompt(q.ctx, &operatorv1.DecidePromptRequest{PromptId: id, Decision: d, Text: text}); err != nil {
		return err
	}
	return s.redirect(q, "/ui/inbox", "Decision saved: "+shortEnum(d)+".")
}

func (s *Server) decideCallApproval(q *request) error {
	id, err := q.id()
	if err != nil {
		return err
	}
	d, text, err := q.decision()
	if err != nil {
		return err
	}
	if _, err := s.op.DecideCallApproval(q.ctx, &operatorv1.DecideCallApprovalRequest{CallApprovalId: id, Decision: d, Note: text}); err != nil {
		return err
	}
	return s.redirect(q, "/ui/inbox", "Decision saved: "+shortEnum(d)+".")
}
