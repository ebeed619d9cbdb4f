package operator

import (
	"context"
	"encoding/json"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/interaction"
	"github.com/turncli/turncli/primary/store"
	"math"
)

// Questions is the engine behind the question methods: it keeps the forms of ask_questions,
// checks answers against their questions and resumes the conversation once they are
// submitted. Answers are a JSON object `{"<question id>": {"values": […], "custom": "…"}}`.
//
// Errors: store.ErrNotFound for an unknown id; store.ErrForbidden when by may not act on the
// form (only its requester answers); store.ErrConflict for a stale revision or a form no
// longer pending, in which case nothing changed; store.ErrInvalid for answers that break a
// rule, named in the message.
type Questions interface {
	// ListQuestions returns the forms matching f, newest first.
	ListQuestions(ctx context.Context, f store.QuestionFilter) ([]store.QuestionRequest, error)
	// Question returns one form.
	Question(ctx context.Context, id int64) (store.QuestionRequest, error)
	// SaveQuestionDraft saves answers as the draft when revision is the form's current one.
	SaveQuestionDraft(ctx context.Context, id int64, by interaction.Person, revision int64, answers json.RawMessage) (store.QuestionRequest, error)
	// SubmitQuestionAnswers submits answers (every required question answered) when revision
	// is the form's current one, together with the continuation that gives them to the
	// conversation, exactly once.
	SubmitQuestionAnswers(ctx context.Context, id int64, by interaction.Person, revision int64, answers json.RawMessage) (store.QuestionRequest, error)
	// CancelQuestion cancels a pending form.
	CancelQuestion(ctx context.Context, id int64, by interaction.Person) (store.QuestionRequest, error)
}

// ListQuestions implements OperatorService.
func (s *Server) ListQuestions(ctx context.Context, req *operatorv1.ListQuestionsRequest) (*operatorv1.ListQuestionsResponse, error) {
	if _, err := caller(ctx, false, ""); err != nil {
		return nil, err
	}
	st, ok := questionStatusFromProto[req.GetStatus()]
	if !ok {
		return nil, fault.New(fault.InvalidArgument, "status is not a question status")
	}
	channel, thread, err := conversationFilter(req.GetConversation())
	if err != nil {
		return nil, err
	}
	pg, limit, before, err := idPage("questions", req.GetPageSize(), req.GetPageToken(), string(st), channel, thread, req.GetRequester())
	if err != nil {
		return nil, err
	}
	list, err := s.questions.ListQuestions(ctx, store.QuestionFilter{
		Status: st, Channel: channel, Thread: thread, Requester: req.GetRequester(), BeforeID: before, Limit: limit,
	})
	if err != nil {
		return nil, err
	}
	resp := &operatorv1.ListQuestionsResponse{}
	resp.Questions, resp.NextPageToken = encodeIDPage(pg, limit, list, func(q store.QuestionRequest) int64 { return q.ID }, questionToProto)
	return resp, nil
}

// GetQuestion implements OperatorService.
func (s *Server) GetQuestion(ctx context.Context, req *operatorv1.GetQuestionRequest) (*operatorv1.GetQuestionResponse, error) {
	if _, err := caller(ctx, false, ""); err != nil {
		return nil, err
	}
	q, err := s.questionCall(ctx, req.GetQuestionId(), func(engine Questions, id int64) (store.QuestionRequest, error) {
		return engine.Question(ctx, id)
	})
	if err != nil {
		return nil, err
	}
	return &operatorv1.GetQuestionResponse{Question: questionToProto(q)}, nil
}

// SaveQuestionDraft implements OperatorService.
func (s *Server) SaveQuestionDraft(ctx context.Context, req *operatorv1.SaveQuestionDraftRequest) (*operatorv1.SaveQuestionDraftResponse, error) {
	op, err := caller(ctx, false, "")
	if err != nil {
		return nil, err
	}
	q, err := s.questionCall(ctx, req.GetQuestionId(), func(engine Questions, id int64) (store.QuestionRequest, error) {
		revision, err := questionRevision(ctx, engine, id, req.GetRevision())
		if err != nil {
			return store.QuestionRequest{}, err
		}
		return engine.SaveQuestionDraft(ctx, id, interaction.OperatorPerson(op), revision, json.RawMessage(req.GetAnswersJson()))
	})
	if err != nil {
		return nil, err
	}
	return &operatorv1.SaveQuestionDraftResponse{Question: questionToProto(q)}, nil
}

// SubmitQuestionAnswers implements OperatorService.
func (s *Server) SubmitQuestionAnswers(ctx context.Context, req *operatorv1.SubmitQuestionAnswersRequest) (*operatorv1.SubmitQuestionAnswersResponse, error) {
	op, err := caller(ctx, false, "")
	if err != nil {
		return nil, err
	}
	q, err := s.questionCall(ctx, req.GetQuestionId(), func(engine Questions, id int64) (store.QuestionRequest, error) {
		revision, err := questionRevision(ctx, engine, id, req.GetRevision())
		if err != nil {
			return store.QuestionRequest{}, err
		}
		return engine.SubmitQuestionAnswers(ctx, id, interaction.OperatorPerson(op), revision, json.RawMessage(req.GetAnswersJson()))
	})
	if err != nil {
		return nil, err
	}
	s.logger.Info("questions answered", "operator", op.Name, "question", q.ID)
	return &operatorv1.SubmitQuestionAnswersResponse{Question: questionToProto(q)}, nil
}

// CancelQuestion implements OperatorService.
func (s *Server) CancelQuestion(ctx context.Context, req *operatorv1.CancelQuestionRequest) (*operatorv1.CancelQuestionResponse, error) {
	op, err := caller(ctx, false, "")
	if err != nil {
		return nil, err
	}
	q, err := s.questionCall(ctx, req.GetQuestionId(), func(engine Questions, id int64) (store.QuestionRequest, error) {
		return engine.CancelQuestion(ctx, id, interaction.OperatorPerson(op))
	})
	if err != nil {
		return nil, err
	}
	s.logger.Info("questions cancelled", "operator", op.Name, "question", q.ID)
	return &operatorv1.CancelQuestionResponse{Question: questionToProto(q)}, nil
}

// questionCall runs call on the engine for the form the API id names, mapping a missing form
// to NOT_FOUND; other errors keep their kind.
func (s *Server) questionCall(ctx context.Context, apiID uint64, call func(Questions, int64) (store.QuestionRequest, error)) (store.QuestionRequest, error) {
	return readRecord(apiID, "question request", func(id int64) (store.QuestionRequest, error) {
		return call(s.questions, id)
	})
}

// questionRevision converts a revision from the API for form id: one no form can have is stale,
// once the form is known to exist (a missing form is NOT_FOUND whatever the revision).
func questionRevision(ctx context.Context, engine Questions, id int64, r uint64) (int64, error) {
	if r == 0 || r > math.MaxInt64 {
		if _, err := engine.Question(ctx, id); err != nil {
			return 0, err
		}
		return 0, fault.New(fault.Conflict, "revision is not one this form had; read the form again")
	}
	return int64(r), nil
}

var questionStatusFromProto = map[operatorv1.QuestionStatus]store.QuestionStatus{
	operatorv1.QuestionStatus_QUESTION_STATUS_UNSPECIFIED: "",
	operatorv1.QuestionStatus_QUESTION_STATUS_PENDING:     store.QuestionPending,
	operatorv1.QuestionStatus_QUESTION_STATUS_SUBMITTED:   store.QuestionSubmitted,
	operatorv1.QuestionStatus_QUESTION_STATUS_CANCELLED:   store.QuestionCancelled,
}

var presentationFromProto = map[operatorv1.QuestionPresentation]string{
	operatorv1.QuestionPresentation_QUESTION_PRESENTATION_AUTO:    "auto",
	operatorv1.QuestionPresentation_QUESTION_PRESENTATION_MESSAGE: "message",
	operatorv1.QuestionPresentation_QUESTION_PRESENTATION_MODAL:   "modal",
}

func questionToProto(q store.QuestionRequest) *operatorv1.QuestionForm {
	return &operatorv1.QuestionForm{
		Id:            uint64(q.ID),
		Status:        protoOf(questionStatusFromProto, q.Status),
		Conversation:  conversationToProto(q.Channel, q.Thread),
		Requester:     q.Requester,
		Agent:         q.Agent,
		ResponseId:    q.ResponseID,
		Title:         q.Title,
		Presentation:  protoOf(presentationFromProto, q.Presentation),
		QuestionsJson: string(q.Questions),
		Revision:      uint64(max(q.Revision, 0)),
		DraftJson:     string(q.Draft),
		AnswersJson:   string(q.Answers),
		CreatedAt:     timestamp(q.CreatedAt),
		UpdatedAt:     timestamp(q.UpdatedAt),
		SubmittedAt:   timestamp(q.SubmittedAt),
		CancelledBy:   q.CancelledBy,
		CancelledAt:   timestamp(q.CancelledAt),
	}
}
