package interaction

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/turncli/turncli/primary/store"
)

// What people do with question requests, through the operator API. Errors:
// store.ErrNotFound (no such request), store.ErrForbidden (the operator may not),
// store.ErrConflict (not pending any more, or a stale revision) and store.ErrInvalid (answers
// that break a rule, named in the message).

// Person is who answers or withdraws a question request: an operator, or a requester the
// primary knows by the id the runtime gave (a chat account linked to them), who holds no
// operator credential. The rules below compare the person's name with the request's
// requester, so both answer alike.
type Person struct {
	// Name is the operator's name or the requester's id.
	Name string
	// Role is the operator's role; empty when the person is no operator.
	Role store.OperatorRole
}

// OperatorPerson is the person an operator is.
func OperatorPerson(op store.Operator) Person { return Person{Name: op.Name, Role: op.Role} }

// threadStopActor cancels the requests of a stopped thread.
const threadStopActor = "primary"

// ListQuestions returns the question requests matching f, newest first.
func (s *Questions) ListQuestions(ctx context.Context, f store.QuestionFilter) ([]store.QuestionRequest, error) {
	db := s.cfg.Store
	return db.ListQuestionRequests(ctx, f)
}

// Question returns one question request.
func (s *Questions) Question(ctx context.Context, id int64) (store.QuestionRequest, error) {
	db := s.cfg.Store
	return db.QuestionRequest(ctx, id)
}

// SaveQuestionDraft saves the requester's answers so far, when revision is the request's
// current one, and returns the request at its new revision. Answers may leave any question
// out, but what they give must be valid.
func (s *Questions) SaveQuestionDraft(ctx context.Context, id int64, by Person, revision int64, answers json.RawMessage) (store.QuestionRequest, error) {
	db, q, questions, err := s.answerable(ctx, id, by)
	if err != nil {
		return store.QuestionRequest{}, err
	}
	parsed, err := parseAnswers(questions, answers)
	if err != nil {
		return store.QuestionRequest{}, err
	}
	draft, err := json.Marshal(parsed)
	if err != nil {
		return store.QuestionRequest{}, err
	}
	q, err = db.SaveQuestionDraft(ctx, q.ID, revision, draft)
	if err != nil {
		return store.QuestionRequest{}, err
	}
	s.publishQuestion(KindQuestionUpdated, q)
	return q, nil
}

// SubmitQuestionAnswers submits the requester's answers, when revision is the request's
// current one: every required question must be answered. The submission and the
// continuation giving the answers to the conversation are one transaction, so the
// conversation is told exactly once; a second submit is store.ErrConflict.
func (s *Questions) SubmitQuestionAnswers(ctx context.Context, id int64, by Person, revision int64, answers json.RawMessage) (store.QuestionRequest, error) {
	db, q, questions, err := s.answerable(ctx, id, by)
	if err != nil {
		return store.QuestionRequest{}, err
	}
	parsed, err := parseAnswers(questions, answers)
	if err != nil {
		return store.QuestionRequest{}, err
	}
	if err := checkComplete(questions, parsed); err != nil {
		return store.QuestionRequest{}, err
	}
	final, err := json.Marshal(parsed)
	if err != nil {
		return store.QuestionRequest{}, err
	}
	q, err = db.SubmitQuestionAnswers(ctx, q.ID, revision, by.Name, final, store.NewContinuation{
		IdempotencyKey: store.QuestionContinuationKey(q.ID), Channel: q.Channel, Thread: q.Thread,
		Text: answersText(q, questions, parsed),
	})
	if err != nil {
		return store.QuestionRequest{}, err
	}
	s.cfg.Notify()
	s.log.Info("questions answered", "question", q.ID, "by", by.Name)
	s.publishQuestion(KindQuestionSubmitted, q)
	return q, nil
}

// CancelQuestion withdraws a pending request; its requester or an admin may.
func (s *Questions) CancelQuestion(ctx context.Context, id int64, by Person) (store.QuestionRequest, error) {
	db := s.cfg.Store
	q, err := db.QuestionRequest(ctx, id)
	if err != nil {
		return store.QuestionRequest{}, err
	}
	if by.Name != q.Requester && by.Role != store.RoleAdmin {
		return store.QuestionRequest{}, fmt.Errorf("%w: only %s, who was asked, or an admin can cancel question request %d", store.ErrForbidden, q.Requester, id)
	}
	q, err = db.CancelQuestionRequest(ctx, id, by.Name)
	if err != nil {
		return store.QuestionRequest{}, err
	}
	s.publishQuestion(KindQuestionCancelled, q)
	return q, nil
}

// CancelThreadQuestions cancels every pending request of a thread that was stopped and
// returns them.
func (s *Questions) CancelThreadQuestions(ctx context.Context, channel, thread string) ([]store.QuestionRequest, error) {
	db := s.cfg.Store
	qs, err := db.CancelThreadQuestionRequests(ctx, channel, thread, threadStopActor)
	if err != nil {
		return nil, err
	}
	for _, q := range qs {
		s.publishQuestion(KindQuestionCancelled, q)
	}
	return qs, nil
}

// answerable loads a request that by may answer: by is its requester and it is pending. It is
// the rule's one home: only the requester answers, operator or not, and no admin answers
// for them.
func (s *Questions) answerable(ctx context.Context, id int64, by Person) (store.Questions, store.QuestionRequest, []store.Question, error) {
	db := s.cfg.Store
	q, err := db.QuestionRequest(ctx, id)
	if err != nil {
		return nil, store.QuestionRequest{}, nil, err
	}
	if by.Name != q.Requester {
		return nil, store.QuestionRequest{}, nil, fmt.Errorf("%w: only %s, who was asked, can answer question request %d", store.ErrForbidden, q.Requester, id)
	}
	if q.Status != store.QuestionPending {
		return nil, store.QuestionRequest{}, nil, fmt.Errorf("%w: question request %d is %s", store.ErrConflict, id, q.Status)
	}
	questions, err := decodeQuestions(q)
	if err != nil {
		return nil, store.QuestionRequest{}, nil, err
	}
	return db, q, questions, nil
}
