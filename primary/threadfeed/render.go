package threadfeed

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/store"
)

// render is the item event e tells of as its record now stands, seen through v, and the
// report that follows it (a finished job's, told with its closing; empty otherwise).
func (f *Feed) render(ctx context.Context, e store.ThreadEvent, v View) (Item, string, error) {
	it := Item{EventID: e.ID, At: e.At, Change: e.Change, Channel: e.Channel, Thread: e.Thread,
		Key: string(e.Kind) + "/" + e.Key, State: StateOpen}
	var err error
	report := ""
	switch e.Kind {
	case store.ThreadApproval:
		err = f.renderApproval(ctx, e.Key, &it)
	case store.ThreadPrompt:
		err = f.renderPrompt(ctx, e.Key, &it)
	case store.ThreadCallApproval:
		err = f.renderCall(ctx, e.Key, &it)
	case store.ThreadQuestion:
		err = f.renderQuestion(ctx, e.Key, &it)
	case store.ThreadProgress:
		err = f.renderProgress(ctx, e.Key, &it)
	case store.ThreadJob:
		report, err = f.renderJob(ctx, e, &it)
	default:
		return Item{}, "", fmt.Errorf("thread feed: event %d is of an unknown kind %q", e.ID, e.Kind)
	}
	if err != nil {
		return Item{}, "", fmt.Errorf("thread feed: event %d (%s): %w", e.ID, it.Key, err)
	}
	f.redact(&it)
	it.Preview, it.PreviewTruncated = preview(it.Text, v.CardBytes)
	if it.State == StateOpen {
		it.Actions = actionsOf(it.Kind)
	}
	return it, f.cfg.Redact(report), nil
}

// actionsOf is what a person may do with an open item of kind.
func actionsOf(kind Kind) []Action {
	switch kind {
	case KindCommandApproval, KindPlanApproval:
		return []Action{ActionApprove, ActionDeny, ActionComment}
	case KindPermission:
		return []Action{ActionAllowOnce, ActionAllowThread, ActionAllowConversation, ActionDeny}
	case KindCallApproval:
		return []Action{ActionApprove, ActionDeny}
	case KindQuestionForm:
		return []Action{ActionSaveDraft, ActionSubmit, ActionCancel}
	}
	return nil
}

// redact replaces the live secrets in every text of it.
func (f *Feed) redact(it *Item) {
	r := f.cfg.Redact
	for _, s := range []*string{&it.Title, &it.Text, &it.Workdir, &it.ApproveLabel, &it.DenyLabel} {
		*s = r(*s)
	}
	for i := range it.Comments {
		it.Comments[i].Text = r(it.Comments[i].Text)
	}
	if it.Closing != nil {
		it.Closing.Note = r(it.Closing.Note)
	}
}

// idOf is the record id of an event's key.
func idOf(key string) (int64, error) {
	id, err := strconv.ParseInt(key, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: thread item %q", store.ErrNotFound, key)
	}
	return id, nil
}

func (f *Feed) renderApproval(ctx context.Context, key string, it *Item) error {
	id, err := idOf(key)
	if err != nil {
		return err
	}
	ap, err := f.cfg.Store.Approval(ctx, id)
	if err != nil {
		return err
	}
	it.OpenedAt = ap.CreatedAt
	it.Kind, it.Title, it.Text, it.Workdir, it.Requester, it.Agent = KindCommandApproval, ap.Label, ap.Command, ap.Workdir, ap.Author, ap.Agent
	it.Channel, it.Thread = ap.Channel, ap.Thread
	for _, c := range ap.Comments {
		it.Comments = append(it.Comments, Comment{By: c.Actor, Text: c.Text, At: c.At})
	}
	if ap.Status == store.ApprovalPending {
		return nil
	}
	decision := ActionApprove
	if ap.Status == store.ApprovalDenied {
		decision = ActionDeny
	}
	return f.close(ctx, it, store.ApprovalSubject(id), Closing{How: ClosedDecided, Decision: decision, By: ap.DecidedBy, At: ap.DecidedAt, Note: ap.Note})
}

func (f *Feed) renderPrompt(ctx context.Context, key string, it *Item) error {
	id, err := idOf(key)
	if err != nil {
		return err
	}
	p, err := f.cfg.Store.Prompt(ctx, id)
	if err != nil {
		return err
	}
	it.OpenedAt, it.Deadline = p.CreatedAt, p.Deadline
	it.Requester, it.Agent, it.Channel, it.Thread = p.Requester, p.Agent, p.Channel, p.Thread
	if p.Kind == store.PromptPermission {
		it.Kind, it.Title, it.Text = KindPermission, p.ToolName, string(p.MaskedInput)
	} else {
		it.Kind, it.Title, it.Text, it.ApproveLabel, it.DenyLabel = KindPlanApproval, p.Title, p.Details, p.ApproveLabel, p.DenyLabel
	}
	switch p.Status {
	case store.PromptPending:
		return nil
	case store.PromptExpired:
		return f.close(ctx, it, "", Closing{How: ClosedExpired, At: p.DecidedAt, Note: p.Feedback})
	}
	return f.close(ctx, it, store.PromptSubject(id), Closing{How: ClosedDecided, Decision: Action(p.Decision), By: p.DecidedBy, At: p.DecidedAt, Note: p.Feedback})
}

func (f *Feed) renderCall(ctx context.Context, key string, it *Item) error {
	id, err := idOf(key)
	if err != nil {
		return err
	}
	c, err := f.cfg.Store.CallApproval(ctx, id)
	if err != nil {
		return err
	}
	it.OpenedAt = c.CreatedAt
	it.Kind, it.Title, it.Text, it.Requester, it.Agent = KindCallApproval, c.Toolkit+"."+c.Function, c.Arguments, c.Requester, c.Agent
	it.Channel, it.Thread = c.Channel, c.Thread
	switch c.Status {
	case store.CallApprovalWaiting:
		return nil
	case store.CallApprovalDenied:
		return f.close(ctx, it, store.CallApprovalSubject(id), Closing{How: ClosedDecided, Decision: ActionDeny, By: c.DecidedBy, At: c.DecidedAt, Note: c.Note})
	case store.CallApprovalExpired:
		return f.close(ctx, it, "", Closing{How: ClosedExpired, At: c.SettledAt})
	}
	return f.close(ctx, it, store.CallApprovalSubject(id), Closing{How: ClosedDecided, Decision: ActionApprove, By: c.DecidedBy, At: c.DecidedAt})
}

func (f *Feed) renderQuestion(ctx context.Context, key string, it *Item) error {
	id, err := idOf(key)
	if err != nil {
		return err
	}
	q, err := f.cfg.Store.QuestionRequest(ctx, id)
	if err != nil {
		return err
	}
	it.OpenedAt = q.CreatedAt
	it.Kind, it.Title, it.Text, it.Requester, it.Agent = KindQuestionForm, q.Title, string(q.Questions), q.Requester, q.Agent
	it.Presentation, it.Revision, it.Channel, it.Thread = q.Presentation, q.Revision, q.Channel, q.Thread
	switch q.Status {
	case store.QuestionSubmitted:
		return f.close(ctx, it, store.QuestionSubject(id), Closing{How: ClosedAnswered, By: q.Requester, At: q.SubmittedAt})
	case store.QuestionCancelled:
		return f.close(ctx, it, store.QuestionSubject(id), Closing{How: ClosedCancelled, By: q.CancelledBy, At: q.CancelledAt})
	}
	return nil
}

func (f *Feed) renderProgress(ctx context.Context, responseID string, it *Item) error {
	ps, err := f.cfg.Store.ListProgress(ctx, store.ProgressFilter{ResponseID: responseID, Limit: 1})
	if err != nil {
		return err
	}
	if len(ps) == 0 {
		return fmt.Errorf("%w: plan of response %s", store.ErrNotFound, responseID)
	}
	p := ps[0]
	it.Kind, it.Title, it.Text, it.Requester, it.Agent = KindPlanSnapshot, p.Title, string(p.Steps), p.Requester, p.Agent
	it.Channel, it.Thread = p.Channel, p.Thread
	return nil
}

func (f *Feed) renderJob(ctx context.Context, e store.ThreadEvent, it *Item) (string, error) {
	id, err := idOf(e.Key)
	if err != nil {
		return "", err
	}
	j, err := f.cfg.Store.Job(ctx, id)
	if err != nil {
		return "", err
	}
	it.OpenedAt = j.CreatedAt
	it.Kind = KindJob
	if j.Kind == "agent" {
		it.Kind = KindAgent
	}
	it.Title, it.Text, it.Requester, it.Agent, it.Channel, it.Thread = j.Label, j.Command, j.Author, j.Agent, j.Channel, j.Thread
	if j.Status != store.JobFinished {
		return "", nil
	}
	if err := f.close(ctx, it, "", Closing{How: ClosedFinished, At: j.EndedAt, Note: j.Outcome}); err != nil {
		return "", err
	}
	if e.Change != store.ThreadClosed {
		return "", nil // the report follows the event of the end only
	}
	c, err := f.cfg.Store.ContinuationByKey(ctx, jobs.ReportKey(id))
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	return c.Text, err
}

// close marks it closed as c says, naming the chat account the decision was relayed from when
// the newest audit entry of subject by c.By names one.
func (f *Feed) close(ctx context.Context, it *Item, subject string, c Closing) error {
	it.State = StateClosed
	it.Closing = &c
	if subject == "" || c.By == "" {
		return nil
	}
	entries, err := f.cfg.Store.ListAudit(ctx, store.AuditFilter{Subject: subject, Actor: c.By, Limit: 1})
	if err != nil {
		return err
	}
	if len(entries) == 1 {
		if via, ok := store.ViaOfAudit(entries[0]); ok {
			c.Via = &via
		}
	}
	return nil
}
