package dashboard

import (
	"encoding/json"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
)

// The Responses view: the live responses (reply turns), their Bash windows and receipts, and
// the progress plan each reported, as steps.

// step is one step of a report_progress plan, as steps_json carries it: its notes (details),
// what it produced (output) and where it comes from (sources), all the agent's text.
type step struct {
	ID      string   `json:"id"`
	Title   string   `json:"title"`
	Status  string   `json:"status"`
	Details string   `json:"details"`
	Output  string   `json:"output"`
	Sources []source `json:"sources"`
}

// source is a link a step cites: an absolute http or https URL and its text.
type source struct {
	URL  string `json:"url"`
	Text string `json:"text"`
}

// liveResponse is a response with its latest plan, if it reported one.
type liveResponse struct {
	*operatorv1.LiveResponse
	Plan  string
	Steps []step
}

type responsesData struct{ Responses []liveResponse }

func (s *Server) loadResponses(q *request) (responsesData, error) {
	resp, err := s.op.ListResponses(q.ctx, &operatorv1.ListResponsesRequest{PageSize: 100})
	if err != nil {
		return responsesData{}, err
	}
	progress, err := s.op.ListProgress(q.ctx, &operatorv1.ListProgressRequest{PageSize: 1000})
	if err != nil {
		return responsesData{}, err
	}
	plans := make(map[string]*operatorv1.ProgressSnapshot, len(progress.GetSnapshots()))
	for _, p := range progress.GetSnapshots() {
		plans[p.GetResponseId()] = p
	}
	d := responsesData{Responses: make([]liveResponse, 0, len(resp.GetResponses()))}
	for _, r := range resp.GetResponses() {
		lr := liveResponse{LiveResponse: r}
		if p, ok := plans[r.GetId()]; ok {
			lr.Plan = p.GetTitle()
			// A plan that does not parse is shown without steps: it came from an agent.
			_ = json.Unmarshal([]byte(p.GetStepsJson()), &lr.Steps)
		}
		d.Responses = append(d.Responses, lr)
	}
	return d, nil
}
