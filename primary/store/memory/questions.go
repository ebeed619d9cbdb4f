package memory

import (
	"context"

	"github.com/turncli/turncli/primary/store"
)

// InsertQuestionRequest implements store.Tx: while the requester has a request pending in the
// thread, whoever saved it, the insert finds that one instead. The key is not kept: nothing
// reads it back.
func (t *tx) InsertQuestionRequest(_ context.Context, _ string, q store.QuestionRequest) (int64, bool, error) {
	owner := ownerOf(q)
	if q.Status == store.QuestionPending {
		if id, ok := t.s.pendingQuestions[owner]; ok {
			return id, false, nil
		}
	}
	q.ID = t.s.questions.nextID()
	q.Questions, q.Draft, q.Answers = text(q.Questions), text(q.Draft), nullText(q.Answers)
	q.CreatedAt, q.UpdatedAt, q.SubmittedAt, q.CancelledAt = stamp(q.CreatedAt), stamp(q.UpdatedAt), stamp(q.SubmittedAt), stamp(q.CancelledAt)
	t.s.questions.insert(t, q)
	if q.Status == store.QuestionPending {
		put(t, t.s.pendingQuestions, owner, q.ID)
	}
	return q.ID, true, nil
}

func ownerOf(q store.QuestionRequest) questionOwner {
	return questionOwner{conversation{q.Channel, q.Thread}, q.Requester}
}

// UpdateQuestionRequest implements store.Tx: the request's status and revision are its prior
// state.
func (t *tx) UpdateQuestionRequest(_ context.Context, prev, next store.QuestionRequest) (bool, error) {
	stored, ok := t.s.questions.get(next.ID)
	if !ok || stored.Status != prev.Status || stored.Revision != prev.Revision {
		return false, nil
	}
	updated := stored
	updated.Status, updated.Revision, updated.Draft, updated.Answers = next.Status, next.Revision, text(next.Draft), nullText(next.Answers)
	updated.UpdatedAt, updated.SubmittedAt = stamp(next.UpdatedAt), stamp(next.SubmittedAt)
	updated.CancelledBy, updated.CancelledAt = next.CancelledBy, stamp(next.CancelledAt)
	t.s.questions.set(t, next.ID, updated)
	if stored.Status == store.QuestionPending && updated.Status != store.QuestionPending {
		remove(t, t.s.pendingQuestions, ownerOf(stored))
	}
	return true, nil
}

// questionOut is a stored request as a reader gets it, with its own JSON values.
func questionOut(q *store.QuestionRequest) store.QuestionRequest {
	out := *q
	out.Questions, out.Draft, out.Answers = text(q.Questions), text(q.Draft), nullText(q.Answers)
	return out
}

// QuestionRequest implements store.Reader.
func (v view) QuestionRequest(_ context.Context, id int64) (store.QuestionRequest, error) {
	defer v.read()()
	return v.s.questions.read(id, "question request", questionOut)
}

// ListQuestionRequests implements store.Reader. Channel and thread are compared each on its
// own (a request's thread is never empty).
func (v view) ListQuestionRequests(_ context.Context, f store.QuestionFilter) ([]store.QuestionRequest, error) {
	defer v.read()()
	return newestFirst(&v.s.questions, f.BeforeID, f.Limit, func(q *store.QuestionRequest) bool {
		return equalOrAny(q.Status, f.Status) && equalOrAny(q.Channel, f.Channel) && equalOrAny(q.Thread, f.Thread) &&
			equalOrAny(q.Requester, f.Requester)
	}, questionOut), nil
}
