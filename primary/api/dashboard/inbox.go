package dashboard

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/faultgrpc"
	"github.com/turncli/turncli/primary/store"
)

// inboxData is everything waiting for a person: what anyone may decide, the question forms
// put to the signed-in operator and, for an admin, the forms waiting for other people (only
// their requester answers them; the admin sees what the conversations wait for).
type inboxData struct {
	Approvals      []*operatorv1.Approval
	CallApprovals  []*operatorv1.CallApproval
	Prompts        []*operatorv1.Prompt
	Questions      []*operatorv1.QuestionForm
	OtherQuestions []*operatorv1.QuestionForm
	// Refused is the decision the server just refused for what was typed, shown on its card.
	Refused *refusedDecision
}

// refusedDecision is a decision form the server refused for its input (a comment without
// text, a text too long): its card shows why, with the text as it was typed.
type refusedDecision struct {
	Card    string // the card's element id, as "prompt-7"
	Message string
	Text    string
}

// decisionForm is what a card's text field shows: empty, or the refused decision's text and
// the reason, when the refusal was this card's.
type decisionForm struct {
	Text, Problem string
}

// Form is the text field of the card with element id card.
func (d inboxData) Form(card string) decisionForm {
	if d.Refused == nil || d.Refused.Card != card {
		return decisionForm{}
	}
	return decisionForm{Text: d.Refused.Text, Problem: d.Refused.Message}
}

func (d inboxData) Empty() bool {
	return len(d.Approvals)+len(d.CallApprovals)+len(d.Prompts)+len(d.Questions)+len(d.OtherQuestions) == 0
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
	questions, err := s.op.ListQuestions(q.ctx, &operatorv1.ListQuestionsRequest{Status: operatorv1.QuestionStatus_QUESTION_STATUS_PENDING, Requester: q.questionsFor()})
	if err != nil {
		return d, err
	}
	d = inboxData{Approvals: approvals.GetApprovals(), CallApprovals: calls.GetCallApprovals(), Prompts: prompts.GetPrompts()}
	for _, f := range questions.GetQuestions() {
		if f.GetRequester() == q.s.name {
			d.Questions = append(d.Questions, f)
		} else {
			d.OtherQuestions = append(d.OtherQuestions, f)
		}
	}
	return d, nil
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

// decide answers a decision button of the inbox: call makes the decision on the server,
// whose cards are named card-<id> on the page. A decision refused for what was typed (a
// comment needs text) comes back on the inbox, on its card with the text kept, not as an
// error page: the person fixes it and sends it again.
func (s *Server) decide(card string, call func(ctx context.Context, id uint64, d operatorv1.Decision, text string) error) func(*request) error {
	return func(q *request) error {
		id, err := q.id()
		if err != nil {
			return err
		}
		d, text, err := q.decision()
		if err != nil {
			return err
		}
		err = faultgrpc.FromStatus(call(q.ctx, id, d, text))
		if fault.Is(err, fault.InvalidArgument) && !q.fragment() {
			return s.refused(q, &refusedDecision{Card: card + "-" + strconv.FormatUint(id, 10), Message: refusalText(err), Text: q.r.PostFormValue("text")})
		}
		if err != nil {
			return err
		}
		return s.redirect(q, "/ui/inbox", "Decision saved: "+shortEnum(d)+".")
	}
}

// refused shows the inbox again with a refused decision on its card.
func (s *Server) refused(q *request, r *refusedDecision) error {
	d, err := s.loadInbox(q)
	if err != nil {
		return err
	}
	d.Refused = r
	s.render(q, http.StatusUnprocessableEntity, "inbox", "Inbox", d)
	return nil
}

// refusalText is the server's reason, as a sentence for the card. The store's refusals open
// with its sentinel's words ("invalid argument: "), which say nothing the card does not.
func refusalText(err error) string {
	msg := strings.TrimPrefix(err.Error(), store.ErrInvalid.Error()+": ")
	if msg == "" {
		return "The server refused this decision."
	}
	return strings.ToUpper(msg[:1]) + msg[1:] + "."
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
