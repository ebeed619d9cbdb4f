package interaction

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/store"
)

// ProgressAccepted is report_progress's fixed result (contract: interaction controls).
const ProgressAccepted = "Foreground Slack Plan accepted."

// KindProgressUpdated is the live-feed event of a saved snapshot; its subject is
// "response/<id>".
const KindProgressUpdated = "progress.updated"

func reportProgressFunction() catalog.Function {
	return catalog.Function{
		Name: "report_progress",
		Description: "Show the people in this conversation your plan and where you are in it: a title and every step with its status. " +
			"Each call replaces the previous report, so send the full, authoritative snapshot every time: every step, not only those that changed. " +
			"Keep step ids and their order stable from one report to the next. " +
			"Report substantial stages only (a step starting, finishing or failing), not every small action.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"title":{"type":"string","description":"The plan's title, 1..80 characters."},` +
			`"steps":{"type":"array","description":"The whole plan in order, 1..20 steps.","items":{"type":"object","properties":{` +
			`"id":{"type":"string","description":"A stable id, 1..80 characters, unique in the plan; keep it across reports."},` +
			`"title":{"type":"string","description":"What the step does, 1..240 characters."},` +
			`"status":{"type":"string","enum":["pending","in_progress","complete","error"],"description":"At most one step is in_progress."},` +
			`"details":{"type":"string","description":"More about the step, at most 2000 characters."},` +
			`"output":{"type":"string","description":"What the step produced, at most 2000 characters."},` +
			`"sources":{"type":"array","description":"Links the step relies on, at most 10.","items":{"type":"object","properties":{` +
			`"url":{"type":"string","description":"An absolute http or https URL, at most 2000 characters, without surrounding spaces."},` +
			`"text":{"type":"string","description":"The link's text, 1..240 characters."}},` +
			`"required":["url","text"],"additionalProperties":false}}},` +
			`"required":["id","title","status"],"additionalProperties":false}}},` +
			`"required":["title","steps"],"additionalProperties":false}`),
		// No traits: the report is saved and shown before the call returns.
	}
}

// reportProgress saves the response's plan, replacing its previous one, and shows it live.
func (s *Progress) reportProgress(ctx context.Context, call catalog.Call) (catalog.Result, error) {
	p, err := parsePlan(call.Arguments)
	if err != nil {
		return catalog.Result{}, err
	}
	db := s.cfg.Store
	steps, err := json.Marshal(p.steps)
	if err != nil {
		return catalog.Result{}, err
	}
	id := call.Identity
	snap := store.ProgressSnapshot{
		ResponseID: id.ResponseID, Channel: id.Channel, Thread: id.Thread, Agent: id.Agent, Requester: id.Requester,
		Title: p.title, Steps: steps, UpdatedAt: s.cfg.Clock.Now().UTC(),
	}
	if err := db.SaveProgress(ctx, snap); err != nil {
		s.log.Error("progress not saved", "response", snap.ResponseID, "err", err)
		return catalog.Result{}, errors.New("the progress report could not be saved; try again")
	}
	s.cfg.Events.Publish(KindProgressUpdated, "response/"+snap.ResponseID, progressEvent(snap, p.steps))
	return catalog.Result{Value: ProgressAccepted}, nil
}

// ListProgress returns the saved progress snapshots matching f, most recently updated first.
func (s *Progress) ListProgress(ctx context.Context, f store.ProgressFilter) ([]store.ProgressSnapshot, error) {
	db := s.cfg.Store
	return db.ListProgress(ctx, f)
}

// progressEvent is a snapshot as the live feed carries it.
func progressEvent(p store.ProgressSnapshot, steps []store.ProgressStep) map[string]any {
	list := make([]any, 0, len(steps))
	for _, st := range steps {
		sources := make([]any, 0, len(st.Sources))
		for _, src := range st.Sources {
			sources = append(sources, map[string]any{"url": src.URL, "text": src.Text})
		}
		list = append(list, map[string]any{
			"id": st.ID, "title": st.Title, "status": string(st.Status), "details": st.Details, "output": st.Output, "sources": sources,
		})
	}
	return map[string]any{
		"response_id": p.ResponseID, "channel": p.Channel, "thread": p.Thread, "agent": p.Agent, "requester": p.Requester,
		"title": p.Title, "steps": list, "updated_at": p.UpdatedAt.Format(time.RFC3339Nano),
	}
}
