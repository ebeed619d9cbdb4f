package interaction

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/turncli/turncli/primary/store"
)

// answerQuestions are one question of each kind: a single with custom answers, a single
// without, a multi with, a multi without, and a required and an optional text question.
var answerQuestions = []store.Question{
	{ID: "env", Prompt: "Which environment?", Type: store.QuestionSingle, Required: true, AllowCustom: true,
		Options: []store.QuestionOption{{Label: "Staging", Value: "staging"}, {Label: "Production", Value: "prod"}}},
	{ID: "size", Prompt: "Which size?", Type: store.QuestionSingle, Required: false, AllowCustom: false,
		Options: []store.QuestionOption{{Label: "Small", Value: "s"}, {Label: "Large", Value: "l"}}},
	{ID: "extras", Prompt: "Which extras?", Type: store.QuestionMulti, Required: false, AllowCustom: true,
		Options: []store.QuestionOption{{Label: "Logs", Value: "logs"}, {Label: "Metrics", Value: "metrics"}, {Label: "Traces", Value: "traces"}}},
	{ID: "fixed", Prompt: "Which fixed ones?", Type: store.QuestionMulti, Required: false, AllowCustom: false,
		Options: []store.QuestionOption{{Label: "A", Value: "a"}}},
	{ID: "why", Prompt: "Why?", Type: store.QuestionText, Required: true, AllowCustom: true, Options: []store.QuestionOption{}},
	{ID: "notes", Prompt: "Notes?", Type: store.QuestionText, Required: false, AllowCustom: true, Options: []store.QuestionOption{}},
}

func TestParseAnswersRules(t *testing.T) {
	cases := []struct {
		name    string
		answers string
		refusal string // empty: accepted
	}{
		{"NoAnswersPassAsADraft", `{}`, ""},
		{"NullPassesAsADraft", `null`, ""},
		{"AnEmptyBodyPassesAsADraft", ``, ""},
		{"AKnownSingleValuePasses", `{"env":{"values":["prod"]}}`, ""},
		{"ACustomAnswerInsteadOfASingleChoicePasses", `{"env":{"custom":"qa cluster"}}`, ""},
		{"AnEmptyCustomBesideASingleChoicePasses", `{"env":{"values":["prod"],"custom":"  "}}`, ""},
		{"MultiValuesWithACustomAnswerPass", `{"extras":{"values":["logs","traces"],"custom":"profiles"}}`, ""},
		{"ATextAnswerPasses", `{"why":{"custom":"because"}}`, ""},
		{"ACustomAnswerOf2000CharactersPasses", `{"why":{"custom":" ` + strings.Repeat("c", 2000) + ` "}}`, ""},

		{"AnswersThatAreNotAnObjectFail", `["env"]`, "answers must be a JSON object"},
		{"RepeatedJSONKeysFail", `{"env":{"values":["prod"]},"env":{"values":["staging"]}}`, "answers must be a JSON object"},
		{"AnUnknownQuestionFails", `{"env":{"values":["prod"]},"colour":{"custom":"red"}}`, `answers name "colour", which is not a question of this request`},
		{"AnAnswerThatIsNotAnObjectFails", `{"env":"prod"}`, "answers.env must be an object"},
		{"AnUnknownAnswerKeyFails", `{"env":{"value":"prod"}}`, `answers.env has the unknown key "value"; an answer has only the keys values, custom`},
		{"ValuesThatAreNotAnArrayFail", `{"env":{"values":"prod"}}`, "answers.env.values must be an array"},
		{"ANonStringValueFails", `{"extras":{"values":["logs",1]}}`, "answers.extras.values[1] must be a string"},
		{"AnUnknownValueFails", `{"env":{"values":["qa"]}}`, `answers.env.values[0]: "qa" is not an option of question env`},
		{"AnOptionLabelIsNotAValue", `{"env":{"values":["Production"]}}`, `"Production" is not an option of question env`},
		{"ARepeatedValueFails", `{"extras":{"values":["logs","metrics","logs"]}}`, `answers.extras.values[2]: "logs" is chosen twice`},
		{"TwoValuesOfASingleQuestionFail", `{"env":{"values":["prod","staging"]}}`, "question env is a single question and takes at most 1 value; 2 are given"},
		{"AChoiceAndACustomAnswerOfASingleQuestionFail", `{"env":{"values":["prod"],"custom":"qa"}}`,
			"a custom answer replaces the choice of single question env; give a value or a custom answer, not both"},
		{"ACustomAnswerWhereNotAllowedFails", `{"size":{"custom":"medium"}}`, "answers.size.custom: question size does not allow a custom answer"},
		{"ACustomAnswerBesideMultiValuesWhereNotAllowedFails", `{"fixed":{"values":["a"],"custom":"b"}}`, "question fixed does not allow a custom answer"},
		{"ValuesForATextQuestionFail", `{"why":{"values":["because"]}}`, "answers.why.values: question why is a text question and takes only a custom answer"},
		{"EmptyValuesForATextQuestionPass", `{"why":{"values":[],"custom":"ok"}}`, ""},
		{"ACustomAnswerOf2001CharactersFails", `{"why":{"custom":"` + strings.Repeat("c", 2001) + `"}}`, "answers.why.custom must be at most 2000 characters after trimming"},
		{"ANonStringCustomAnswerFails", `{"why":{"custom":true}}`, "answers.why.custom must be a string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseAnswers(answerQuestions, json.RawMessage(c.answers))
			switch {
			case c.refusal == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.refusal != "" && err == nil:
				t.Fatalf("accepted; want a refusal containing %q", c.refusal)
			case c.refusal != "" && !strings.Contains(err.Error(), c.refusal):
				t.Fatalf("refusal %q does not contain %q", err, c.refusal)
			case c.refusal != "" && !errors.Is(err, store.ErrInvalid):
				t.Fatalf("refusal %v is not store.ErrInvalid", err)
			}
		})
	}
}

func TestParseAnswersNormalizes(t *testing.T) {
	got, err := parseAnswers(answerQuestions, json.RawMessage(`{
		"env": {"custom": "  qa cluster  "},
		"extras": {"values": ["traces", "logs"], "custom": ""},
		"size": {"values": []},
		"notes": {"custom": "   "}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	want := store.QuestionAnswers{
		"env":    {Values: []string{}, Custom: "qa cluster"},
		"extras": {Values: []string{"logs", "traces"}}, // in option order
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parsed %+v, want %+v (empty answers are left out)", got, want)
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); s != `{"env":{"values":[],"custom":"qa cluster"},"extras":{"values":["logs","traces"],"custom":""}}` {
		t.Errorf("stored as %s", s)
	}
}

func TestCheckComplete(t *testing.T) {
	parse := func(t *testing.T, s string) store.QuestionAnswers {
		t.Helper()
		a, err := parseAnswers(answerQuestions, json.RawMessage(s))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	t.Run("EveryRequiredQuestionAnsweredPasses", func(t *testing.T) {
		if err := checkComplete(answerQuestions, parse(t, `{"env":{"values":["prod"]},"why":{"custom":"x"}}`)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("AMissingRequiredQuestionFails", func(t *testing.T) {
		err := checkComplete(answerQuestions, parse(t, `{"env":{"values":["prod"]}}`))
		if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), `question why ("Why?") is required and has no answer`) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("ABlankAnswerToARequiredQuestionFails", func(t *testing.T) {
		err := checkComplete(answerQuestions, parse(t, `{"env":{"values":[],"custom":" "},"why":{"custom":"x"}}`))
		if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "question env") {
			t.Fatalf("got %v", err)
		}
	})
}

func TestAnswersText(t *testing.T) {
	q := store.QuestionRequest{ID: 7, Requester: "@alice:example.org", Title: "Deploy"}
	answers := store.QuestionAnswers{
		"env":    {Values: []string{}, Custom: "qa cluster"},
		"size":   {Values: []string{"l"}},
		"extras": {Values: []string{"logs", "metrics"}, Custom: "profiles"},
		"why":    {Values: []string{}, Custom: "release day"},
	}
	want := `@alice:example.org answered the questions of request 7, "Deploy". Continue with these answers.

1. Which environment?
Answer: in their own words: qa cluster

2. Which size?
Answer: Large

3. Which extras?
Answer: Logs, Metrics; in their own words: profiles

4. Which fixed ones?
Answer: (skipped)

5. Why?
Answer: release day

6. Notes?
Answer: (skipped)`
	if got := answersText(q, answerQuestions, answers); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
