package store

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"time"
)

// Questions keeps ask_questions requests, their drafts and submissions. A request is saved
// pending for one person (its requester), collects drafts under a revision that every change
// increases (each draft save is a compare-and-swap on it), and ends exactly once: submitted,
// together with the continuation that gives the answers to its conversation, or cancelled.
// At most one request per (channel, thread, requester) is pending at a time; the database
// enforces it.
//
// The store checks structure (required fields, JSON objects and arrays, states, revisions),
// not meaning: which answers fit which questions is decided by the caller before it writes.
type Questions interface {
	// SaveQuestionRequest saves r as pending with revision 1. When the requester already has
	// a pending request in r's conversation thread: one with the same Key is returned with
	// created false (asking the same again makes no second form); a different one is returned
	// with an error wrapping ErrConflict (a person answers one form at a time in a thread).
	SaveQuestionRequest(ctx context.Context, r NewQuestionRequest) (q QuestionRequest, created bool, err error)
	// QuestionRequest returns one request; ErrNotFound when it does not exist.
	QuestionRequest(ctx context.Context, id int64) (QuestionRequest, error)
	// ListQuestionRequests returns the requests matching f, newest first.
	ListQuestionRequests(ctx context.Context, f QuestionFilter) ([]QuestionRequest, error)
	// SaveQuestionDraft replaces a pending request's draft (a JSON object of QuestionAnswers)
	// when its revision is still revision, and increases the revision. ErrConflict when it is
	// not pending or the revision is stale.
	SaveQuestionDraft(ctx context.Context, id, revision int64, draft json.RawMessage) (QuestionRequest, error)
	// SubmitQuestionAnswers moves a pending request whose revision is still revision to
	// submitted with answers (a JSON object of QuestionAnswers, also kept as its draft),
	// appends ActionQuestionSubmit by actor, and enqueues tell, all in one transaction.
	// ErrConflict when it is not pending (a second submit) or the revision is stale.
	SubmitQuestionAnswers(ctx context.Context, id, revision int64, actor string, answers json.RawMessage, tell NewContinuation) (QuestionRequest, error)
	// CancelQuestionRequest moves a pending request to cancelled by actor and appends
	// ActionQuestionCancel, in one transaction. ErrConflict when it is not pending.
	CancelQuestionRequest(ctx context.Context, id int64, actor string) (QuestionRequest, error)
	// CancelThreadQuestionRequests cancels every pending request of the conversation thread
	// (any requester) by actor, each with its audit entry, in one transaction, and returns
	// them (none when nothing was pending).
	CancelThreadQuestionRequests(ctx context.Context, channel, thread, actor string) ([]QuestionRequest, error)
}

// QuestionStatus is a question request's state.
type QuestionStatus string

// The question request states: pending → submitted | cancelled.
const (
	QuestionPending   QuestionStatus = "pending"
	QuestionSubmitted QuestionStatus = "submitted"
	QuestionCancelled QuestionStatus = "cancelled"
)

// Valid reports whether st is one of the states.
func (st QuestionStatus) Valid() bool {
	return st == QuestionPending || st == QuestionSubmitted || st == QuestionCancelled
}

// Audit actions of question requests.
const (
	// ActionQuestionSubmit: detail {"question": id}. The answers are not copied to the log.
	ActionQuestionSubmit = "question.submit"
	// ActionQuestionCancel: detail {"question": id}.
	ActionQuestionCancel = "question.cancel"
)

// QuestionSubject is the audit subject of a question request.
func QuestionSubject(id int64) string { return "question/" + strconv.FormatInt(id, 10) }

// QuestionContinuationKey is the idempotency key of the continuation a submission enqueues.
func QuestionContinuationKey(id int64) string { return "questions:" + strconv.FormatInt(id, 10) }

// NewQuestionRequest is a request to save.
type NewQuestionRequest struct {
	Channel   string // required
	Thread    string // required: questions belong to a real thread
	Requester string // required: the only person who answers
	Agent     string
	// ResponseID is the response that asked.
	ResponseID string
	Title      string // required
	// Presentation is "auto", "message" or "modal".
	Presentation string
	// Questions is the normalized, non-empty JSON array of Question.
	Questions json.RawMessage
}

// Key is the hex SHA-256 of what the request asks (title, presentation, questions), each
// length-prefixed: two requests with the same key are the same form.
func (r NewQuestionRequest) Key() string {
	h := sha256.New()
	var n [8]byte
	for _, f := range []string{r.Title, r.Presentation, string(r.Questions)} {
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		h.Write(n[:])
		h.Write([]byte(f))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// QuestionRequest is a stored request.
type QuestionRequest struct {
	ID         int64
	Channel    string
	Thread     string
	Requester  string
	Agent      string
	ResponseID string
	Title      string
	// Presentation is "auto", "message" or "modal".
	Presentation string
	// Questions is the normalized questions array (see Question).
	Questions json.RawMessage
	Status    QuestionStatus
	// Revision starts at 1 and increases with every change.
	Revision int64
	// Draft is the latest saved answers ({} before any; see QuestionAnswers), and the final
	// ones once submitted.
	Draft json.RawMessage
	// Answers is the submitted answers; nil unless submitted.
	Answers   json.RawMessage
	CreatedAt time.Time
	UpdatedAt time.Time
	// SubmittedAt is zero unless submitted.
	SubmittedAt time.Time
	// CancelledBy and CancelledAt are set only when cancelled.
	CancelledBy string
	CancelledAt time.Time
}

// QuestionFilter selects question requests; empty fields match everything (a request's
// thread is never empty).
type QuestionFilter struct {
	Status    QuestionStatus
	Channel   string
	Thread    string
	Requester string
	// BeforeID, when positive, returns only older records (smaller ids): the id of the last
	// record of the previous page.
	BeforeID int64
	// Limit is at most 1000; zero means 100.
	Limit int
}

// QuestionType is how a question is answered.
type QuestionType string

// The question types.
const (
	QuestionSingle QuestionType = "single" // one option (or a custom answer instead)
	QuestionMulti  QuestionType = "multi"  // any number of options (and a custom answer too)
	QuestionText   QuestionType = "text"   // a custom answer only
)

// Question is one element of QuestionRequest.Questions, with every default applied.
type Question struct {
	ID     string       `json:"id"`
	Prompt string       `json:"prompt"`
	Type   QuestionType `json:"type"`
	// Options is empty for text questions.
	Options     []QuestionOption `json:"options"`
	Required    bool             `json:"required"`
	AllowCustom bool             `json:"allowCustom"`
}

// QuestionOption is one choice of a single or multi question.
type QuestionOption struct {
	Label string `json:"label"`
	Value string `json:"value"`
}

// QuestionAnswers is the shape of QuestionRequest.Draft and Answers: answers by question id.
// Unanswered questions are absent.
type QuestionAnswers map[string]QuestionAnswer

// QuestionAnswer is the answer to one question: chosen option values and a custom text.
type QuestionAnswer struct {
	Values []string `json:"values"`
	Custom string   `json:"custom"`
}
