package interaction

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/store"
)

// Live-feed events of question requests; their subject is store.QuestionSubject.
const (
	KindQuestionCreated   = "question.created"
	KindQuestionUpdated   = "question.updated" // a draft was saved
	KindQuestionSubmitted = "question.submitted"
	KindQuestionCancelled = "question.cancelled"
)

// continueIndependent closes every ask_questions acknowledgement and refusal.
const continueIndependent = "Until then continue only with work that does not depend on the answers: do not guess them, do not ask again and do not poll."

func askQuestionsFunction() catalog.Function {
	return catalog.Function{
		Name: "ask_questions",
		Description: "Ask the person you are answering a few questions in a form. It returns at once with the request id and never with answers: " +
			"their answers resume this conversation when they submit them. Meanwhile continue only with work that does not depend on them, " +
			"and never infer or assume a default answer in their place. It is not for asking permission or approval: use request_approval for that. " +
			"A person has one form waiting per thread at a time.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"title":{"type":"string","description":"The form's title, 1..120 characters."},` +
			`"questions":{"type":"array","description":"1..20 questions (at most 4 with presentation message).","items":{"type":"object","properties":{` +
			`"id":{"type":"string","description":"A letter, then at most 39 letters, digits, '_' or '-'; unique in the form."},` +
			`"prompt":{"type":"string","description":"The question, 1..300 characters."},` +
			`"type":{"type":"string","enum":["single","multi","text"],"description":"single: pick one option (1..4 options); multi: pick any (1..10 options); text: a written answer (no options)."},` +
			`"options":{"type":"array","description":"The choices of a single or multi question; values unique.","items":{"type":"object","properties":{` +
			`"label":{"type":"string","description":"What the person sees, 1..60 characters."},` +
			`"value":{"type":"string","description":"What the answer carries, 1..60 characters."}},` +
			`"required":["label","value"],"additionalProperties":false}},` +
			`"required":{"type":"boolean","description":"Whether it must be answered (default true)."},` +
			`"allowCustom":{"type":"boolean","description":"Whether the person may answer in their own words (default true; text questions always allow it)."}},` +
			`"required":["id","prompt","type"],"additionalProperties":false}},` +
			`"presentation":{"type":"string","enum":["auto","message","modal"],"description":"How the form is shown (default auto)."}},` +
			`"required":["title","questions"],"additionalProperties":false}`),
		// The answers come from a person. The call itself returns at once and the agent may go on
		// with independent work, so it does not end the turn by itself.
		Traits: catalog.Traits{UserInput: true},
	}
}

// askQuestions saves a pending form for the requester and acknowledges it at once.
func (s *Questions) askQuestions(ctx context.Context, call catalog.Call) (catalog.Result, error) {
	f, err := parseForm(call.Arguments)
	if err != nil {
		return catalog.Result{}, err
	}
	id := call.Identity
	if id.Thread == "" || id.Requester == "" {
		return catalog.Result{}, errors.New("questions can be asked only in a thread, of the person the response answers")
	}
	db := s.cfg.Store
	questions, err := json.Marshal(f.questions)
	if err != nil {
		return catalog.Result{}, err
	}
	q, created, err := db.SaveQuestionRequest(ctx, store.NewQuestionRequest{
		Channel: id.Channel, Thread: id.Thread, Requester: id.Requester, Agent: id.Agent, ResponseID: id.ResponseID,
		Title: f.title, Presentation: f.presentation, Questions: questions,
	})
	switch {
	case errors.Is(err, store.ErrConflict) && q.ID != 0:
		return catalog.Result{}, fmt.Errorf("questions request %d is still waiting for %s's answers in this thread; "+
			"a different request can be asked only after it is answered or cancelled. %s", q.ID, q.Requester, continueIndependent)
	case err != nil:
		s.log.Error("questions not saved", "response", id.ResponseID, "err", err)
		return catalog.Result{}, errors.New("the questions could not be saved; try again")
	}
	text := fmt.Sprintf("Saved questions request %d for %s; their answers resume this conversation once they submit them. %s",
		q.ID, q.Requester, continueIndependent)
	if created {
		s.log.Info("questions asked", "question", q.ID, "channel", q.Channel)
		s.publishQuestion(KindQuestionCreated, q)
	} else {
		text = fmt.Sprintf("The same questions are already waiting as request %d; nothing new was saved. %s", q.ID, continueIndependent)
	}
	return catalog.Result{Value: map[string]any{"status": "pending", "request_id": q.ID, "message": text}}, nil
}

// publishQuestion puts a request's change on the live feed (never the answers: people read
// those from the operator API).
func (s *Questions) publishQuestion(kind string, q store.QuestionRequest) {
	data := map[string]any{
		"id": q.ID, "status": string(q.Status), "channel": q.Channel, "thread": q.Thread, "requester": q.Requester,
		"agent": q.Agent, "response_id": q.ResponseID, "title": q.Title, "presentation": q.Presentation,
		"revision": q.Revision, "cancelled_by": q.CancelledBy, "updated_at": q.UpdatedAt.Format(time.RFC3339Nano),
	}
	s.cfg.Events.Publish(kind, store.QuestionSubject(q.ID), data)
}
