package interaction

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/primary/store"
)

// parseAnswers checks answers given to questions and returns them normalized: custom text
// trimmed, values in the questions' option order, unanswered questions left out. The shape is
// {"<question id>": {"values": [option values], "custom": "text"}}; both keys are optional.
// Required questions may be left out (a draft); see checkComplete. Errors wrap
// store.ErrInvalid and name the question and the rule.
func parseAnswers(questions []store.Question, raw json.RawMessage) (store.QuestionAnswers, error) {
	out := store.QuestionAnswers{}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return out, nil
	}
	m, err := canonjson.ParseObject(trimmed)
	if err != nil {
		return nil, fmt.Errorf("%w: answers must be a JSON object of answers by question id: %v", store.ErrInvalid, err)
	}
	var unknown []string
	for k := range m {
		if !slices.ContainsFunc(questions, func(q store.Question) bool { return q.ID == k }) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("%w: answers name %q, which is not a question of this request", store.ErrInvalid, slices.Min(unknown))
	}
	for _, q := range questions {
		v, ok := m[q.ID]
		if !ok {
			continue
		}
		a, err := parseAnswer(q, v)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", store.ErrInvalid, err)
		}
		if len(a.Values) > 0 || a.Custom != "" {
			out[q.ID] = a
		}
	}
	return out, nil
}

// checkComplete refuses answers that leave a required question without an answer.
func checkComplete(questions []store.Question, answers store.QuestionAnswers) error {
	for _, q := range questions {
		if _, ok := answers[q.ID]; q.Required && !ok {
			return fmt.Errorf("%w: question %s (%q) is required and has no answer", store.ErrInvalid, q.ID, q.Prompt)
		}
	}
	return nil
}

func parseAnswer(q store.Question, v any) (store.QuestionAnswer, error) {
	o, err := readObject("answers."+q.ID, v)
	if err != nil {
		return store.QuestionAnswer{}, err
	}
	if err := o.only("an answer", "values", "custom"); err != nil {
		return store.QuestionAnswer{}, err
	}
	a := store.QuestionAnswer{Values: []string{}}
	if a.Custom, err = o.text("custom", 0, MaxCustomAnswer); err != nil {
		return store.QuestionAnswer{}, err
	}
	if a.Custom != "" && !q.AllowCustom {
		return store.QuestionAnswer{}, fmt.Errorf("%s: question %s does not allow a custom answer; choose from its options", o.at("custom"), q.ID)
	}
	values, _, err := o.array("values")
	if err != nil {
		return store.QuestionAnswer{}, err
	}
	if q.Type == store.QuestionText && len(values) > 0 {
		return store.QuestionAnswer{}, fmt.Errorf("%s: question %s is a text question and takes only a custom answer", o.at("values"), q.ID)
	}
	chosen := map[string]bool{}
	for i, vv := range values {
		val, ok := vv.(string)
		switch {
		case !ok:
			return store.QuestionAnswer{}, fmt.Errorf("%s must be a string", elemPath(o.at("values"), i))
		case !slices.ContainsFunc(q.Options, func(opt store.QuestionOption) bool { return opt.Value == val }):
			return store.QuestionAnswer{}, fmt.Errorf("%s: %q is not an option of question %s", elemPath(o.at("values"), i), val, q.ID)
		case chosen[val]:
			return store.QuestionAnswer{}, fmt.Errorf("%s: %q is chosen twice", elemPath(o.at("values"), i), val)
		}
		chosen[val] = true
	}
	switch {
	case q.Type == store.QuestionSingle && len(chosen) > 1:
		return store.QuestionAnswer{}, fmt.Errorf("%s: question %s is a single question and takes at most 1 value; %d are given", o.at("values"), q.ID, len(chosen))
	case q.Type == store.QuestionSingle && len(chosen) == 1 && a.Custom != "":
		return store.QuestionAnswer{}, fmt.Errorf("%s: a custom answer replaces the choice of single question %s; give a value or a custom answer, not both", o.path, q.ID)
	}
	for _, opt := range q.Options {
		if chosen[opt.Value] {
			a.Values = append(a.Values, opt.Value)
		}
	}
	return a, nil
}

// answersText is what the conversation is told when answers are submitted: each prompt with
// its answer (option labels and custom text), or "(skipped)".
func answersText(q store.QuestionRequest, questions []store.Question, answers store.QuestionAnswers) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s answered the questions of request %d, %q. Continue with these answers.\n", q.Requester, q.ID, q.Title)
	for i, qu := range questions {
		fmt.Fprintf(&b, "\n%d. %s\nAnswer: %s\n", i+1, qu.Prompt, answerText(qu, answers[qu.ID]))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func answerText(q store.Question, a store.QuestionAnswer) string {
	var parts []string
	if len(a.Values) > 0 {
		labels := make([]string, 0, len(a.Values))
		for _, v := range a.Values {
			for _, opt := range q.Options {
				if opt.Value == v {
					labels = append(labels, opt.Label)
				}
			}
		}
		parts = append(parts, strings.Join(labels, ", "))
	}
	switch {
	case a.Custom == "":
	case q.Type == store.QuestionText:
		parts = append(parts, a.Custom)
	default:
		parts = append(parts, "in their own words: "+a.Custom)
	}
	if len(parts) == 0 {
		return "(skipped)"
	}
	return strings.Join(parts, "; ")
}

// decodeQuestions reads a stored request's questions.
func decodeQuestions(q store.QuestionRequest) ([]store.Question, error) {
	var qs []store.Question
	if err := json.Unmarshal(q.Questions, &qs); err != nil {
		return nil, fmt.Errorf("question request %d: stored questions are unreadable: %w", q.ID, err)
	}
	return qs, nil
}
