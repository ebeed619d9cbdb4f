package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/turncli/turncli/primary/store"
)

// InsertQuestionRequest implements store.Tx. The partial unique index on pending requests
// makes the insert a no-op while the requester has one pending in the thread, whoever saved
// it; the pending one is then read in the same transaction.
func (t *Tx) InsertQuestionRequest(ctx context.Context, key string, q store.QuestionRequest) (int64, bool, error) {
	var id int64
	err := t.queryRow(ctx, `INSERT INTO question_requests (key, channel, thread, requester, agent, response_id,
		title, presentation, questions, status, revision, draft, answers, created_at, updated_at, submitted_at,
		cancelled_by, cancelled_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING RETURNING id`,
		key, q.Channel, q.Thread, q.Requester, q.Agent, q.ResponseID, q.Title, q.Presentation, string(q.Questions),
		string(q.Status), q.Revision, string(q.Draft), nullJSON(q.Answers), nanos(q.CreatedAt), nanos(q.UpdatedAt),
		nullNanos(q.SubmittedAt), q.CancelledBy, nullNanos(q.CancelledAt)).Scan(&id)
	switch {
	case err == nil:
		return id, true, nil
	case !errors.Is(err, sql.ErrNoRows):
		return 0, false, fmt.Errorf("store: save question request: %w", err)
	}
	if err := t.queryRow(ctx, `SELECT id FROM question_requests
		WHERE channel = ? AND thread = ? AND requester = ? AND status = 'pending'`,
		q.Channel, q.Thread, q.Requester).Scan(&id); err != nil {
		return 0, false, fmt.Errorf("store: save question request: %w", err)
	}
	return id, false, nil
}

// UpdateQuestionRequest implements store.Tx.
func (t *Tx) UpdateQuestionRequest(ctx context.Context, prev, next store.QuestionRequest) (bool, error) {
	n, err := t.exec(ctx, "update question request", `UPDATE question_requests SET status = ?, revision = ?, draft = ?,
		answers = ?, updated_at = ?, submitted_at = ?, cancelled_by = ?, cancelled_at = ?
		WHERE id = ? AND status = ? AND revision = ?`,
		string(next.Status), next.Revision, string(next.Draft), nullJSON(next.Answers), nanos(next.UpdatedAt),
		nullNanos(next.SubmittedAt), next.CancelledBy, nullNanos(next.CancelledAt), next.ID, string(prev.Status), prev.Revision)
	return n == 1, err
}

// QuestionRequest implements store.Reader.
func (r Reader) QuestionRequest(ctx context.Context, id int64) (store.QuestionRequest, error) {
	var c conditions
	c.Add("id = ?", id)
	found, err := r.queryQuestions(ctx, c, 1)
	return only(found, err, "question request", id)
}

// ListQuestionRequests implements store.Reader.
func (r Reader) ListQuestionRequests(ctx context.Context, f store.QuestionFilter) ([]store.QuestionRequest, error) {
	var c conditions
	c.Equal("status", string(f.Status))
	c.Equal("channel", f.Channel)
	c.Equal("thread", f.Thread)
	c.Equal("requester", f.Requester)
	c.BeforeID(f.BeforeID)
	return r.queryQuestions(ctx, c, f.Limit)
}

// queryQuestions returns up to limit requests matching c, newest first.
func (r Reader) queryQuestions(ctx context.Context, c conditions, limit int) ([]store.QuestionRequest, error) {
	rows, err := r.query(ctx, `SELECT id, channel, thread, requester, agent, response_id, title, presentation,
		questions, status, revision, draft, answers, created_at, updated_at, submitted_at, cancelled_by, cancelled_at
		FROM question_requests WHERE `+c.SQL()+` ORDER BY id DESC LIMIT ?`, append(c.Args, r.limit(limit))...)
	if err != nil {
		return nil, fmt.Errorf("store: question requests: %w", err)
	}
	out, err := collect(rows, func(row Row) (store.QuestionRequest, error) {
		var q store.QuestionRequest
		var questions, status, draft string
		var answers *string
		var created, updated int64
		var submitted, cancelled *int64
		if err := row.Scan(&q.ID, &q.Channel, &q.Thread, &q.Requester, &q.Agent, &q.ResponseID, &q.Title,
			&q.Presentation, &questions, &status, &q.Revision, &draft, &answers, &created, &updated, &submitted,
			&q.CancelledBy, &cancelled); err != nil {
			return q, err
		}
		q.Questions, q.Status, q.Draft = json.RawMessage(questions), store.QuestionStatus(status), json.RawMessage(draft)
		if answers != nil {
			q.Answers = json.RawMessage(*answers)
		}
		q.CreatedAt, q.UpdatedAt = fromNanos(created), fromNanos(updated)
		q.SubmittedAt, q.CancelledAt = fromNullNanos(submitted), fromNullNanos(cancelled)
		return q, nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: question requests: %w", err)
	}
	return out, nil
}
