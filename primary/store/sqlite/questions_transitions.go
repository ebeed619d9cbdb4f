package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// Each change of a question request is one transaction around one statement that matches the
// request only in the state (and, for drafts and submissions, at the revision) the change
// needs: the compare-and-swap. A statement that matched nothing writes nothing more and is
// reported as ErrNotFound or ErrConflict.

// SaveQuestionDraft implements store.Questions.
func (s *Store) SaveQuestionDraft(ctx context.Context, id, revision int64, draft json.RawMessage) (store.QuestionRequest, error) {
	body, err := compactJSON("a draft", draft, '{')
	if err != nil {
		return store.QuestionRequest{}, err
	}
	var out store.QuestionRequest
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE question_requests SET draft = ?, revision = revision + 1, updated_at = ?
			WHERE id = ? AND status = 'pending' AND revision = ?`, string(body), nanos(s.now()), id, revision)
		if err != nil {
			return fmt.Errorf("store: save draft of question request %d: %w", id, err)
		}
		out, err = questionChanged(ctx, tx, res, id, revision, "save a draft of")
		return err
	})
	return out, err
}

// SubmitQuestionAnswers implements store.Questions. The continuation must go to the
// request's own conversation, and its key must be new: a submission tells the conversation
// exactly once.
func (s *Store) SubmitQuestionAnswers(ctx context.Context, id, revision int64, actor string, answers json.RawMessage, tell store.NewContinuation) (store.QuestionRequest, error) {
	if actor == "" {
		return store.QuestionRequest{}, invalid("a submission needs an actor")
	}
	body, err := compactJSON("answers", answers, '{')
	if err != nil {
		return store.QuestionRequest{}, err
	}
	var out store.QuestionRequest
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		now := s.now()
		res, err := tx.ExecContext(ctx, `UPDATE question_requests SET status = 'submitted', answers = ?, draft = ?,
			revision = revision + 1, updated_at = ?, submitted_at = ? WHERE id = ? AND status = 'pending' AND revision = ?`,
			string(body), string(body), nanos(now), nanos(now), id, revision)
		if err != nil {
			return fmt.Errorf("store: submit question request %d: %w", id, err)
		}
		if out, err = questionChanged(ctx, tx, res, id, revision, "submit"); err != nil {
			return err
		}
		if tell.Channel != out.Channel || tell.Thread != out.Thread {
			return invalid("the continuation of question request %d must go to its own conversation", id)
		}
		if err := questionAudit(ctx, tx, actor, store.ActionQuestionSubmit, id, now); err != nil {
			return err
		}
		_, created, err := insertContinuation(ctx, tx, tell, now)
		switch {
		case err != nil:
			return err
		case !created:
			return fmt.Errorf("%w: a continuation with key %q already exists", store.ErrConflict, tell.IdempotencyKey)
		}
		return nil
	})
	return out, err
}

// CancelQuestionRequest implements store.Questions.
func (s *Store) CancelQuestionRequest(ctx context.Context, id int64, actor string) (store.QuestionRequest, error) {
	if actor == "" {
		return store.QuestionRequest{}, invalid("a cancellation needs an actor")
	}
	var out store.QuestionRequest
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		now := s.now()
		res, err := tx.ExecContext(ctx, `UPDATE question_requests SET status = 'cancelled', cancelled_by = ?,
			cancelled_at = ?, revision = revision + 1, updated_at = ? WHERE id = ? AND status = 'pending'`,
			actor, nanos(now), nanos(now), id)
		if err != nil {
			return fmt.Errorf("store: cancel question request %d: %w", id, err)
		}
		if out, err = questionChanged(ctx, tx, res, id, 0, "cancel"); err != nil {
			return err
		}
		return questionAudit(ctx, tx, actor, store.ActionQuestionCancel, id, now)
	})
	return out, err
}

// CancelThreadQuestionRequests implements store.Questions.
func (s *Store) CancelThreadQuestionRequests(ctx context.Context, channel, thread, actor string) ([]store.QuestionRequest, error) {
	if actor == "" {
		return nil, invalid("a cancellation needs an actor")
	}
	var out []store.QuestionRequest
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		now := s.now()
		rows, err := tx.QueryContext(ctx, `UPDATE question_requests SET status = 'cancelled', cancelled_by = ?,
			cancelled_at = ?, revision = revision + 1, updated_at = ?
			WHERE channel = ? AND thread = ? AND status = 'pending' RETURNING id`,
			actor, nanos(now), nanos(now), channel, thread)
		if err != nil {
			return fmt.Errorf("store: cancel thread question requests: %w", err)
		}
		var ids []int64
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return fmt.Errorf("store: cancel thread question requests: %w", err)
			}
			ids = append(ids, id)
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("store: cancel thread question requests: %w", err)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("store: cancel thread question requests: %w", err)
		}
		for _, id := range ids {
			if err := questionAudit(ctx, tx, actor, store.ActionQuestionCancel, id, now); err != nil {
				return err
			}
			q, err := questionIn(ctx, tx, id)
			if err != nil {
				return err
			}
			out = append(out, q)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// questionChanged reads request id after a compare-and-swap statement. When the statement
// matched nothing it says why: the request does not exist (ErrNotFound), is no longer
// pending, or (when revision is positive) is at another revision (ErrConflict).
func questionChanged(ctx context.Context, tx *sql.Tx, res sql.Result, id, revision int64, verb string) (store.QuestionRequest, error) {
	n, err := res.RowsAffected()
	if err != nil {
		return store.QuestionRequest{}, fmt.Errorf("store: %s question request %d: %w", verb, id, err)
	}
	q, err := questionIn(ctx, tx, id)
	if err != nil {
		return store.QuestionRequest{}, err
	}
	switch {
	case n > 0:
		return q, nil
	case q.Status != store.QuestionPending:
		return store.QuestionRequest{}, fmt.Errorf("%w: cannot %s question request %d: it is %s", store.ErrConflict, verb, id, q.Status)
	default:
		return store.QuestionRequest{}, fmt.Errorf("%w: cannot %s question request %d at revision %d: it is at revision %d; reload it and try again",
			store.ErrConflict, verb, id, revision, q.Revision)
	}
}

// questionAudit appends a question request's audit entry.
func questionAudit(ctx context.Context, tx *sql.Tx, actor, action string, id int64, now time.Time) error {
	detail, err := json.Marshal(map[string]any{"question": id})
	if err != nil {
		return fmt.Errorf("store: audit detail: %w", err)
	}
	_, err = insertAudit(ctx, tx, store.NewAuditEntry{Actor: actor, Action: action, Subject: store.QuestionSubject(id), Detail: detail}, now)
	return err
}
