package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// SaveQuestionRequest implements Questions. The driver keeps one pending request per person
// and thread, whoever saved it; the pending one is then compared by Key.
func (p *Portable) SaveQuestionRequest(ctx context.Context, r NewQuestionRequest) (q QuestionRequest, created bool, err error) {
	switch {
	case r.Channel == "" || r.Thread == "":
		return QuestionRequest{}, false, invalid("a question request needs a channel and a thread")
	case r.Requester == "":
		return QuestionRequest{}, false, invalid("a question request needs a requester")
	case r.Title == "":
		return QuestionRequest{}, false, invalid("a question request needs a title")
	}
	switch r.Presentation {
	case "auto", "message", "modal":
	default:
		return QuestionRequest{}, false, invalid("question presentation must be auto, message or modal, not %q", r.Presentation)
	}
	questions, err := compactJSON("questions", r.Questions, '[')
	if err != nil {
		return QuestionRequest{}, false, err
	}
	if string(questions) == "[]" {
		return QuestionRequest{}, false, invalid("a question request needs at least one question")
	}
	r.Questions = questions
	key := r.Key()
	at := p.clock()
	rec := QuestionRequest{
		Channel: r.Channel, Thread: r.Thread, Requester: r.Requester, Agent: r.Agent, ResponseID: r.ResponseID,
		Title: r.Title, Presentation: r.Presentation, Questions: questions, Status: QuestionPending, Revision: 1,
		Draft: json.RawMessage("{}"), CreatedAt: at, UpdatedAt: at,
	}
	var existing QuestionRequest
	err = p.update(ctx, func(tx Tx) error {
		id, made, err := tx.InsertQuestionRequest(ctx, key, rec)
		if err != nil {
			return err
		}
		created = made
		if made {
			tellThread(ctx, tx, ThreadQuestion, id, ThreadOpened, at)
		}
		if q, err = tx.QuestionRequest(ctx, id); err != nil {
			return err
		}
		asked := NewQuestionRequest{Title: q.Title, Presentation: q.Presentation, Questions: q.Questions}
		if !made && asked.Key() != key {
			existing, q = q, QuestionRequest{}
			return fmt.Errorf("%w: question request %d is still pending for %s in this thread", ErrConflict, id, r.Requester)
		}
		return nil
	})
	if err != nil {
		return existing, false, err
	}
	return q, created, nil
}

// QuestionRequest implements Questions.
func (p *Portable) QuestionRequest(ctx context.Context, id int64) (QuestionRequest, error) {
	return p.d.QuestionRequest(ctx, id)
}

// ListQuestionRequests implements Questions.
func (p *Portable) ListQuestionRequests(ctx context.Context, f QuestionFilter) ([]QuestionRequest, error) {
	var err error
	if f.Limit, err = listLimit(f.Limit); err != nil {
		return nil, err
	}
	if f.Status != "" && !f.Status.Valid() {
		return nil, invalid("question status %q is unknown", f.Status)
	}
	if err := checkBeforeID(f.BeforeID); err != nil {
		return nil, err
	}
	return p.d.ListQuestionRequests(ctx, f)
}

// anyRevision: a change (a cancellation) that does not depend on the revision. Revisions
// start at 1, so a caller's negative revision is passed on as 0: stale, never "any".
const anyRevision = -1

// stepQuestion changes pending request id in tx: it reads the request, refuses one that is
// not pending or (unless revision is anyRevision) at another revision with ErrConflict, and writes
// the change, which increases the revision, with a compare-and-set on the state and revision
// read. It returns the request as stored.
func stepQuestion(ctx context.Context, tx Tx, id, revision int64, verb string, at time.Time, change func(*QuestionRequest)) (QuestionRequest, error) {
	prev, err := tx.QuestionRequest(ctx, id)
	if err != nil {
		return QuestionRequest{}, err
	}
	if err := questionConflict(prev, revision, verb); err != nil {
		return QuestionRequest{}, err
	}
	next := prev
	change(&next)
	next.Revision, next.UpdatedAt = prev.Revision+1, at
	if ok, err := tx.UpdateQuestionRequest(ctx, prev, next); err != nil {
		return QuestionRequest{}, err
	} else if !ok {
		cur, err := tx.QuestionRequest(ctx, id)
		if err != nil {
			return QuestionRequest{}, err
		}
		if err := questionConflict(cur, revision, verb); err != nil {
			return QuestionRequest{}, err
		}
		return QuestionRequest{}, fmt.Errorf("%w: cannot %s question request %d: it changed meanwhile", ErrConflict, verb, id)
	}
	// A draft updates the form's card; a submission or a cancellation closes it.
	told := ThreadClosed
	if next.Status == QuestionPending {
		told = ThreadUpdated
	}
	tellThread(ctx, tx, ThreadQuestion, id, told, at)
	return tx.QuestionRequest(ctx, id)
}

// questionConflict says why q cannot take a change at revision: it is no longer pending, or
// (unless revision is anyRevision) at another revision.
func questionConflict(q QuestionRequest, revision int64, verb string) error {
	switch {
	case q.Status != QuestionPending:
		return fmt.Errorf("%w: cannot %s question request %d: it is %s", ErrConflict, verb, q.ID, q.Status)
	case revision >= 0 && q.Revision != revision:
		return fmt.Errorf("%w: cannot %s question request %d at revision %d: it is at revision %d; reload it and try again",
			ErrConflict, verb, q.ID, revision, q.Revision)
	}
	return nil
}

// SaveQuestionDraft implements Questions.
func (p *Portable) SaveQuestionDraft(ctx context.Context, id, revision int64, draft json.RawMessage) (QuestionRequest, error) {
	body, err := compactJSON("a draft", draft, '{')
	if err != nil {
		return QuestionRequest{}, err
	}
	at := p.clock()
	var out QuestionRequest
	err = p.update(ctx, func(tx Tx) (err error) {
		out, err = stepQuestion(ctx, tx, id, max(revision, 0), "save a draft of", at, func(q *QuestionRequest) { q.Draft = body })
		return err
	})
	return out, err
}

// SubmitQuestionAnswers implements Questions. The continuation must go to the request's own
// conversation, and its key must be new: a submission tells the conversation exactly once.
func (p *Portable) SubmitQuestionAnswers(ctx context.Context, id, revision int64, actor string, answers json.RawMessage, tell NewContinuation) (QuestionRequest, error) {
	if actor == "" {
		return QuestionRequest{}, invalid("a submission needs an actor")
	}
	body, err := compactJSON("answers", answers, '{')
	if err != nil {
		return QuestionRequest{}, err
	}
	at := p.clock()
	var out QuestionRequest
	err = p.update(ctx, func(tx Tx) error {
		out, err = stepQuestion(ctx, tx, id, max(revision, 0), "submit", at, func(q *QuestionRequest) {
			q.Status, q.Answers, q.Draft, q.SubmittedAt = QuestionSubmitted, body, body, at
		})
		if err != nil {
			return err
		}
		if tell.Channel != out.Channel || tell.Thread != out.Thread {
			return invalid("the continuation of question request %d must go to its own conversation", id)
		}
		if err := questionAudit(ctx, tx, at, actor, ActionQuestionSubmit, id); err != nil {
			return err
		}
		_, created, err := enqueue(ctx, tx, tell, at)
		switch {
		case err != nil:
			return err
		case !created:
			return fmt.Errorf("%w: a continuation with key %q already exists", ErrConflict, tell.IdempotencyKey)
		}
		return nil
	})
	return out, err
}

// cancelQuestion moves pending request id to cancelled by actor, with its audit entry.
func cancelQuestion(ctx context.Context, tx Tx, id int64, actor string, at time.Time) (QuestionRequest, error) {
	q, err := stepQuestion(ctx, tx, id, anyRevision, "cancel", at, func(q *QuestionRequest) {
		q.Status, q.CancelledBy, q.CancelledAt = QuestionCancelled, actor, at
	})
	if err != nil {
		return QuestionRequest{}, err
	}
	return q, questionAudit(ctx, tx, at, actor, ActionQuestionCancel, id)
}

// CancelQuestionRequest implements Questions.
func (p *Portable) CancelQuestionRequest(ctx context.Context, id int64, actor string) (QuestionRequest, error) {
	if actor == "" {
		return QuestionRequest{}, invalid("a cancellation needs an actor")
	}
	at := p.clock()
	var out QuestionRequest
	err := p.update(ctx, func(tx Tx) (err error) {
		out, err = cancelQuestion(ctx, tx, id, actor, at)
		return err
	})
	return out, err
}

// CancelThreadQuestionRequests implements Questions; it returns the requests oldest first.
func (p *Portable) CancelThreadQuestionRequests(ctx context.Context, channel, thread, actor string) ([]QuestionRequest, error) {
	if actor == "" {
		return nil, invalid("a cancellation needs an actor")
	}
	if channel == "" || thread == "" { // no request has an empty channel or thread
		return nil, nil
	}
	at := p.clock()
	var out []QuestionRequest
	err := p.update(ctx, func(tx Tx) error {
		out = nil
		pending, err := tx.ListQuestionRequests(ctx, QuestionFilter{Status: QuestionPending, Channel: channel, Thread: thread})
		if err != nil {
			return err
		}
		slices.Reverse(pending)
		for _, q := range pending {
			cancelled, err := cancelQuestion(ctx, tx, q.ID, actor, at)
			if err != nil {
				return err
			}
			out = append(out, cancelled)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// questionAudit appends a question request's audit entry.
func questionAudit(ctx context.Context, tx Tx, at time.Time, actor, action string, id int64) error {
	return audit(ctx, tx, at, actor, action, QuestionSubject(id), map[string]any{"question": id})
}
