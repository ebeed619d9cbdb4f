package interaction

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/turncli/turncli/primary/store"
)

// Limits of report_progress (contract: interaction controls), in characters.
const (
	MaxProgressTitle = 80
	MaxProgressSteps = 20
	MaxStepID        = 80
	MaxStepTitle     = 240
	MaxStepText      = 2000 // details and output
	MaxStepSources   = 10
	MaxSourceURL     = 2000
	MaxSourceText    = 240
)

// progressPlan is a valid report_progress input, trimmed.
type progressPlan struct {
	title string
	steps []store.ProgressStep
}

// parsePlan checks report_progress arguments against every rule of the contract and returns
// them trimmed, in the order given. An error names the field and the rule it breaks.
func parsePlan(args map[string]any) (progressPlan, error) {
	top := fieldObject{m: args}
	if err := top.only("report_progress", "title", "steps"); err != nil {
		return progressPlan{}, err
	}
	title, err := top.text("title", 1, MaxProgressTitle)
	if err != nil {
		return progressPlan{}, err
	}
	raw, _, err := top.array("steps")
	if err != nil {
		return progressPlan{}, err
	}
	if len(raw) < 1 || len(raw) > MaxProgressSteps {
		return progressPlan{}, fmt.Errorf("steps must hold 1..%d steps; it holds %d", MaxProgressSteps, len(raw))
	}
	p := progressPlan{title: title, steps: make([]store.ProgressStep, 0, len(raw))}
	ids := map[string]int{}
	inProgress := -1
	for i, v := range raw {
		st, err := parseStep(elemPath("steps", i), v)
		if err != nil {
			return progressPlan{}, err
		}
		if first, ok := ids[st.ID]; ok {
			return progressPlan{}, fmt.Errorf("steps[%d].id %q repeats steps[%d].id; step ids must be unique after trimming", i, st.ID, first)
		}
		ids[st.ID] = i
		if st.Status == store.StepInProgress {
			if inProgress >= 0 {
				return progressPlan{}, fmt.Errorf("steps[%d] and steps[%d] are both in_progress; at most one step may be in_progress", inProgress, i)
			}
			inProgress = i
		}
		p.steps = append(p.steps, st)
	}
	return p, nil
}

func parseStep(path string, v any) (store.ProgressStep, error) {
	o, err := readObject(path, v)
	if err != nil {
		return store.ProgressStep{}, err
	}
	if err := o.only("a step", "id", "title", "status", "details", "output", "sources"); err != nil {
		return store.ProgressStep{}, err
	}
	st := store.ProgressStep{Sources: []store.ProgressSource{}}
	if st.ID, err = o.text("id", 1, MaxStepID); err != nil {
		return store.ProgressStep{}, err
	}
	if st.Title, err = o.text("title", 1, MaxStepTitle); err != nil {
		return store.ProgressStep{}, err
	}
	status, err := o.str("status")
	if err != nil {
		return store.ProgressStep{}, err
	}
	switch st.Status = store.StepStatus(status); st.Status {
	case store.StepPending, store.StepInProgress, store.StepComplete, store.StepError:
	default:
		return store.ProgressStep{}, fmt.Errorf("%s must be one of pending, in_progress, complete, error", o.at("status"))
	}
	if st.Details, err = o.text("details", 0, MaxStepText); err != nil {
		return store.ProgressStep{}, err
	}
	if st.Output, err = o.text("output", 0, MaxStepText); err != nil {
		return store.ProgressStep{}, err
	}
	sources, _, err := o.array("sources")
	if err != nil {
		return store.ProgressStep{}, err
	}
	if len(sources) > MaxStepSources {
		return store.ProgressStep{}, fmt.Errorf("%s must hold at most %d sources; it holds %d", o.at("sources"), MaxStepSources, len(sources))
	}
	for j, sv := range sources {
		src, err := parseSource(elemPath(o.at("sources"), j), sv)
		if err != nil {
			return store.ProgressStep{}, err
		}
		st.Sources = append(st.Sources, src)
	}
	return st, nil
}

func parseSource(path string, v any) (store.ProgressSource, error) {
	o, err := readObject(path, v)
	if err != nil {
		return store.ProgressSource{}, err
	}
	if err := o.only("a source", "url", "text"); err != nil {
		return store.ProgressSource{}, err
	}
	u, err := o.str("url")
	if err != nil {
		return store.ProgressSource{}, err
	}
	if err := checkSourceURL(o.at("url"), u); err != nil {
		return store.ProgressSource{}, err
	}
	text, err := o.text("text", 1, MaxSourceText)
	if err != nil {
		return store.ProgressSource{}, err
	}
	return store.ProgressSource{URL: u, Text: text}, nil
}

// checkSourceURL applies the URL rules: at most MaxSourceURL characters, no surrounding
// whitespace, absolute http or https with a host.
func checkSourceURL(field, u string) error {
	if n := utf8.RuneCountInString(u); n > MaxSourceURL {
		return fmt.Errorf("%s must be at most %d characters; it has %d", field, MaxSourceURL, n)
	}
	if u != strings.TrimSpace(u) {
		return fmt.Errorf("%s must not begin or end with whitespace", field)
	}
	parsed, err := url.Parse(u)
	if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Hostname() == "" {
		return fmt.Errorf("%s must be an absolute http or https URL with a host", field)
	}
	return nil
}
