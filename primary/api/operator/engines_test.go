package operator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/turncli/turncli/primary/interaction"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/store"
)

// storeJobs stands in for the jobs engine over the real store. It runs no process: a cancel
// finishes the job at once as the engine's would once its process group has stopped.
type storeJobs struct {
	st store.Store
	// detached are running jobs this engine does not supervise (a worker's job not reported
	// since a restart); set only between calls.
	detached map[int64]bool
}

func (e *storeJobs) Page(ctx context.Context, f store.JobFilter) ([]jobs.Job, error) {
	recs, err := e.st.PageJobs(ctx, f)
	if err != nil {
		return nil, err
	}
	out := make([]jobs.Job, len(recs))
	for i, r := range recs {
		out[i] = view(r)
	}
	return out, nil
}

func (e *storeJobs) Get(ctx context.Context, id int64) (jobs.Job, error) {
	rec, err := e.st.Job(ctx, id)
	if err != nil {
		return jobs.Job{}, err
	}
	return view(rec), nil
}

func (e *storeJobs) Cancel(ctx context.Context, id int64) error {
	rec, err := e.st.Job(ctx, id)
	if err != nil {
		return err
	}
	switch {
	case rec.Status != store.JobRunning:
		return fmt.Errorf("%w: job %d finished already (%s)", jobs.ErrNotRunning, id, rec.Outcome)
	case e.detached[id]:
		return fmt.Errorf("%w: job %d is not attached to this primary yet (its worker has not reported it)", jobs.ErrNotRunning, id)
	}
	_, _, err = e.st.FinishJob(ctx, id, store.JobResult{Outcome: jobs.OutcomeCancelled},
		store.NewContinuation{IdempotencyKey: "job:" + strconv.FormatInt(id, 10), Channel: rec.Channel, Thread: rec.Thread, Text: "cancelled"})
	return err
}

func view(rec store.Job) jobs.Job {
	end := rec.EndedAt
	if end.IsZero() {
		end = time.Now()
	}
	return jobs.Job{Job: rec, Runtime: max(end.Sub(rec.CreatedAt), 0)}
}

// storeApprovals stands in for the approvals engine over the real store, with one gate (the
// conversation must still be in auto mode) and the store's caps: approving begins the
// approval, re-checks the gate, records the job and settles the approval, never running
// anything.
type storeApprovals struct {
	st                store.Store
	workspace, logDir string
	caps              store.JobCaps
}

func (e *storeApprovals) Approve(ctx context.Context, id int64, by store.Operator) (store.Approval, error) {
	a, err := e.st.BeginApproval(ctx, id, by.Name)
	if err != nil {
		return store.Approval{}, err
	}
	mode, err := e.st.ConversationMode(ctx, a.Channel, a.Thread)
	if err != nil {
		return store.Approval{}, err
	}
	if mode.Mode != store.ModeAuto {
		return e.fail(ctx, id, fmt.Errorf("%w: the conversation is no longer in auto mode", interaction.ErrRefused))
	}
	if _, err := e.st.CreateApprovedJob(ctx, id, store.NewJob{
		Kind: a.Kind, Command: a.Command, Label: a.Label, Channel: a.Channel, Thread: a.Thread, Author: a.Author,
		Agent: a.Agent, Workspace: e.workspace, WorkerKey: a.WorkerKey, Ceiling: a.Ceiling, LogDir: e.logDir,
	}, e.caps); err != nil {
		return e.fail(ctx, id, fmt.Errorf("%w: %w", interaction.ErrRefused, err)) // a cap is a gate, as in the engine
	}
	return e.st.SettleApproval(ctx, id, store.ApprovalConsumed, "")
}

// fail settles an executing approval as failed, noting why, and returns why.
func (e *storeApprovals) fail(ctx context.Context, id int64, why error) (store.Approval, error) {
	if _, err := e.st.SettleApproval(ctx, id, store.ApprovalFailed, why.Error()); err != nil {
		return store.Approval{}, err
	}
	return store.Approval{}, why
}

func (e *storeApprovals) Deny(ctx context.Context, id int64, by store.Operator, reason string) (store.Approval, error) {
	return e.st.DenyApproval(ctx, id, by.Name, reason)
}

func (e *storeApprovals) Comment(ctx context.Context, id int64, by store.Operator, text string) (store.Approval, error) {
	return e.st.CommentApproval(ctx, id, by.Name, text)
}

// storePrompts stands in for the prompts engine over the real store, with its one role rule:
// only an admin allows a tool for a whole conversation. Nobody waits on its prompts.
type storePrompts struct{ st store.Store }

func (e storePrompts) ListPrompts(ctx context.Context, f store.PromptFilter) ([]store.Prompt, error) {
	return e.st.ListPrompts(ctx, f)
}

func (e storePrompts) Prompt(ctx context.Context, id int64) (store.Prompt, error) {
	return e.st.Prompt(ctx, id)
}

func (e storePrompts) DecidePrompt(ctx context.Context, id int64, by store.Operator, d interaction.PromptDecision) (store.Prompt, error) {
	if d.Action == store.DecisionAllowConversation && by.Role != store.RoleAdmin {
		return store.Prompt{}, fmt.Errorf("%w: only an admin can allow a tool for the whole conversation", store.ErrForbidden)
	}
	return e.st.DecidePrompt(ctx, id, by.Name, d.Action, strings.TrimSpace(d.Text))
}

// storeQuestions stands in for the questions engine over the real store: only the requester
// answers (the requester or an admin cancels), answers must be a JSON object, and their
// meaning is not checked.
type storeQuestions struct{ st store.Store }

func (e storeQuestions) ListQuestions(ctx context.Context, f store.QuestionFilter) ([]store.QuestionRequest, error) {
	return e.st.ListQuestionRequests(ctx, f)
}

func (e storeQuestions) Question(ctx context.Context, id int64) (store.QuestionRequest, error) {
	return e.st.QuestionRequest(ctx, id)
}

func (e storeQuestions) SaveQuestionDraft(ctx context.Context, id int64, by interaction.Person, revision int64, answers json.RawMessage) (store.QuestionRequest, error) {
	if err := e.answerable(ctx, id, by, answers); err != nil {
		return store.QuestionRequest{}, err
	}
	return e.st.SaveQuestionDraft(ctx, id, revision, answers)
}

func (e storeQuestions) SubmitQuestionAnswers(ctx context.Context, id int64, by interaction.Person, revision int64, answers json.RawMessage) (store.QuestionRequest, error) {
	if err := e.answerable(ctx, id, by, answers); err != nil {
		return store.QuestionRequest{}, err
	}
	q, err := e.st.QuestionRequest(ctx, id)
	if err != nil {
		return store.QuestionRequest{}, err
	}
	return e.st.SubmitQuestionAnswers(ctx, id, revision, by.Name, answers, store.NewContinuation{
		IdempotencyKey: store.QuestionContinuationKey(id), Channel: q.Channel, Thread: q.Thread, Text: "answered",
	})
}

func (e storeQuestions) CancelQuestion(ctx context.Context, id int64, by interaction.Person) (store.QuestionRequest, error) {
	q, err := e.st.QuestionRequest(ctx, id)
	if err != nil {
		return store.QuestionRequest{}, err
	}
	if by.Name != q.Requester && by.Role != store.RoleAdmin {
		return store.QuestionRequest{}, fmt.Errorf("%w: only %s or an admin can cancel", store.ErrForbidden, q.Requester)
	}
	return e.st.CancelQuestionRequest(ctx, id, by.Name)
}

func (e storeQuestions) answerable(ctx context.Context, id int64, by interaction.Person, answers json.RawMessage) error {
	q, err := e.st.QuestionRequest(ctx, id)
	if err != nil {
		return err
	}
	if by.Name != q.Requester {
		return fmt.Errorf("%w: only %s answers", store.ErrForbidden, q.Requester)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(answers, &m); err != nil {
		return fmt.Errorf("%w: answers must be a JSON object", store.ErrInvalid)
	}
	return nil
}
