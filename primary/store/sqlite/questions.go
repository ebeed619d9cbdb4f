package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/turncli/turncli/primary/store"
)

// SaveQuestionRequest implements store.Questions. The partial unique index on pending
// requests makes the insert a no-op while the requester has one pending in the thread,
// whoever saved it; the pending one is then read in the same transaction.
func (s *Store) SaveQuestionRequest(ctx context.Context, r store.NewQuestionRequest) (q store.QuestionRequest, created bool, err error) {
	switch {
	case r.Channel == "" || r.Thread == "":
		return store.QuestionRequest{}, false, invalid("a question request needs a channel and a thread")
	case r.Requester == "":
		return store.QuestionRequest{}, false, invalid("a question request needs a requester")
	case r.Title == "":
		return store.QuestionRequest{}, false, invalid("a question request needs a title")
	}
	switch r.Presentation {
	case "auto", "message", "modal":
	default:
		return store.QuestionRequest{}, false, invalid("question presentation must be auto, message or modal, not %q", r.Presentation)
	}
	questions, err := compactJSON("questions", r.Questions, '[')
	if err != nil {
		return store.QuestionRequest{}, false, err
	}
	if string(questions) == "[]" {
		return store.QuestionRequest{}, false, invalid("a question request needs at least one question")
	}
	r.Questions = questions
	key := r.Key()
	var existing store.QuestionRequest
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		now := nanos(s.now())
		var id int64
		err := tx.QueryRowContext(ctx, `INSERT INTO question_requests (key, channel, thread, requester, agent, response_id,
			title, presentation, questions, status, revision, draft, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 1, '{}', ?, ?) ON CONFLICT DO NOTHING RETURNING id`,
			key, r.Channel, r.Thread, r.Requester, r.Agent, r.ResponseID, r.Title, r.Presentation, string(questions),
			now, now).Scan(&id)
		switch {
		case err == nil:
			created = true
			q, err = questionIn(ctx, tx, id)
			return err
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("store: save question request: %w", err)
		}
		var pendingKey string
		if err := tx.QueryRowContext(ctx, `SELECT id, key FROM question_requests
			WHERE channel = ? AND thread = ? AND requester = ? AND status = 'pending'`,
			r.Channel, r.Thread, r.Requester).Scan(&id, &pendingKey); err != nil {
			return fmt.Errorf("store: save question request: %w", err)
		}
		if q, err = questionIn(ctx, tx, id); err != nil {
			return err
		}
		if pendingKey != key {
			existing, q = q, store.QuestionRequest{}
			return fmt.Errorf("%w: question request %d is still pending for %s in this thread", store.ErrConflict, id, r.Requester)
		}
		return nil
	})
	if err != nil {
		return existing, false, err
	}
	return q, created, nil
}

// QuestionRequest implements store.Questions.
func (s *Store) QuestionRequest(ctx context.Context, id int64) (store.QuestionRequest, error) {
	return questionIn(ctx, s.read, id)
}

// ListQuestionRequests implements store.Questions.
func (s *Store) ListQuestionRequests(ctx context.Context, f store.QuestionFilter) ([]store.QuestionRequest, error) {
	limit, err := listLimit(f.Limit)
	if err != nil {
		return nil, err
	}
	if f.Status != "" && !f.Status.Valid() {
		return nil, invalid("question status %q is unknown", f.Status)
	}
	var c conditions
	c.equal("status", string(f.Status))
	c.equal("channel", f.Channel)
	c.equal("thread", f.Thread)
	c.equal("requester", f.Requester)
	return queryQuestions(ctx, s.read, c.sql(), c.args, limit)
}

// compactJSON checks that raw is a JSON value opening with open ('{' or '[') and returns it
// compacted.
func compactJSON(what string, raw json.RawMessage, open byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil || buf.Len() == 0 || buf.Bytes()[0] != open {
		kind := "object"
		if open == '[' {
			kind = "array"
		}
		return nil, invalid("%s must be a JSON %s", what, kind)
	}
	return buf.Bytes(), nil
}

// questionIn returns request id read through q; ErrNotFound when it does not exist.
func questionIn(ctx context.Context, q querier, id int64) (store.QuestionRequest, error) {
	qs, err := queryQuestions(ctx, q, "id = ?", []any{id}, 1)
	if err != nil {
		return store.QuestionRequest{}, err
	}
	if len(qs) == 0 {
		return store.QuestionRequest{}, fmt.Errorf("%w: question request %d", store.ErrNotFound, id)
	}
	return qs[0], nil
}

// queryQuestions returns up to limit requests matching where, newest first.
func queryQuestions(ctx context.Context, q querier, where string, args []any, limit int) ([]store.QuestionRequest, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, channel, thread, requester, agent, response_id, title, presentation,
		questions, status, revision, draft, answers, created_at, updated_at, submitted_at, cancelled_by, cancelled_at
		FROM question_requests WHERE `+where+` ORDER BY id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("store: question requests: %w", err)
	}
	defer rows.Close()
	var out []store.QuestionRequest
	for rows.Next() {
		var r store.QuestionRequest
		var questions, status, draft string
		var answers sql.NullString
		var created, updated int64
		var submitted, cancelled sql.NullInt64
		if err := rows.Scan(&r.ID, &r.Channel, &r.Thread, &r.Requester, &r.Agent, &r.ResponseID, &r.Title,
			&r.Presentation, &questions, &status, &r.Revision, &draft, &answers, &created, &updated, &submitted,
			&r.CancelledBy, &cancelled); err != nil {
			return nil, fmt.Errorf("store: question requests: %w", err)
		}
		r.Questions, r.Status, r.Draft = json.RawMessage(questions), store.QuestionStatus(status), json.RawMessage(draft)
		if answers.Valid {
			r.Answers = json.RawMessage(answers.String)
		}
		r.CreatedAt, r.UpdatedAt = fromNanos(created), fromNanos(updated)
		if submitted.Valid {
			r.SubmittedAt = fromNanos(submitted.Int64)
		}
		if cancelled.Valid {
			r.CancelledAt = fromNanos(cancelled.Int64)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: question requests: %w", err)
	}
	return out, nil
}
