package interaction

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/turncli/turncli/primary/store"
)

// optionArgs is n valid options with distinct values.
func optionArgs(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"label": fmt.Sprintf("Option %d", i), "value": fmt.Sprintf("v%d", i)}
	}
	return out
}

// questionArg is a valid question of the type; edit changes it.
func questionArg(id, typ string, edit ...func(map[string]any)) map[string]any {
	q := map[string]any{"id": id, "prompt": "Prompt of " + id, "type": typ}
	if typ != "text" {
		q["options"] = optionArgs(2)
	}
	for _, f := range edit {
		f(q)
	}
	return q
}

// formArgs is valid ask_questions arguments with questions (one text question when none).
func formArgs(questions ...any) map[string]any {
	if len(questions) == 0 {
		questions = []any{questionArg("q", "text")}
	}
	return map[string]any{"title": "Questions", "questions": questions}
}

// textQuestions is n valid text questions with distinct ids.
func textQuestions(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = questionArg(fmt.Sprintf("q%d", i), "text")
	}
	return out
}

func withPresentation(args map[string]any, p string) map[string]any {
	args["presentation"] = p
	return args
}

func TestParseFormBoundaries(t *testing.T) {
	opt := func(label, value string) map[string]any { return map[string]any{"label": label, "value": value} }
	cases := []struct {
		name    string
		args    map[string]any
		refusal string // empty: accepted
	}{
		{"TitleOf120CharactersPasses", map[string]any{"title": " " + strings.Repeat("t", 120) + " ", "questions": textQuestions(1)}, ""},
		{"TitleOf121CharactersFails", map[string]any{"title": strings.Repeat("t", 121), "questions": textQuestions(1)}, "title must be 1..120 characters after trimming"},
		{"BlankTitleFails", map[string]any{"title": "\t", "questions": textQuestions(1)}, "title must be 1..120 characters after trimming"},
		{"AnUnknownTopLevelKeyFails", map[string]any{"title": "x", "questions": textQuestions(1), "deadline": "now"}, `unknown argument "deadline"; ask_questions takes only title, questions, presentation`},

		{"OneQuestionPasses", formArgs(textQuestions(1)...), ""},
		{"TwentyQuestionsPass", formArgs(textQuestions(20)...), ""},
		{"TwentyOneQuestionsFail", formArgs(textQuestions(21)...), "questions must hold 1..20 questions; it holds 21"},
		{"NoQuestionsFail", map[string]any{"title": "x", "questions": []any{}}, "questions must hold 1..20 questions; it holds 0"},
		{"MissingQuestionsFail", map[string]any{"title": "x"}, "questions must hold 1..20 questions"},

		{"PresentationAutoPasses", withPresentation(formArgs(textQuestions(20)...), "auto"), ""},
		{"PresentationModalWithTwentyPasses", withPresentation(formArgs(textQuestions(20)...), "modal"), ""},
		{"PresentationMessageWithFourPasses", withPresentation(formArgs(textQuestions(4)...), "message"), ""},
		{"PresentationMessageWithFiveFails", withPresentation(formArgs(textQuestions(5)...), "message"), "presentation message allows at most 4 questions; this request has 5"},
		{"AnUnknownPresentationFails", withPresentation(formArgs(), "popup"), "presentation must be auto, message or modal"},
		{"AnEmptyPresentationFails", withPresentation(formArgs(), ""), "presentation must be auto, message or modal"},

		{"AQuestionThatIsNotAnObjectFails", formArgs(questionArg("a", "text"), "b"), "questions[1] must be an object"},
		{"AnUnknownQuestionKeyFails", formArgs(questionArg("a", "text", setField("placeholder", "x"))),
			`questions[0] has the unknown key "placeholder"; a question has only the keys id, prompt, type, options, required, allowCustom`},
		{"OneLetterIDPasses", formArgs(questionArg("a", "text")), ""},
		{"IDOf40CharactersPasses", formArgs(questionArg("a"+strings.Repeat("b", 39), "text")), ""},
		{"IDWithDigitsUnderscoreAndHyphenPasses", formArgs(questionArg("Q_1-b", "text")), ""},
		{"IDOf41CharactersFails", formArgs(questionArg("a"+strings.Repeat("b", 40), "text")), "questions[0].id must match ^[A-Za-z][A-Za-z0-9_-]{0,39}$"},
		{"IDStartingWithADigitFails", formArgs(questionArg("1a", "text")), "questions[0].id must match"},
		{"IDWithASpaceFails", formArgs(questionArg("a b", "text")), "questions[0].id must match"},
		{"IDWithSurroundingSpaceFails", formArgs(questionArg(" a", "text")), "questions[0].id must match"},
		{"EmptyIDFails", formArgs(questionArg("", "text")), "questions[0].id must match"},
		{"RepeatedIDFails", formArgs(questionArg("a", "text"), questionArg("b", "text"), questionArg("a", "single")),
			`questions[2].id "a" repeats questions[0].id; question ids must be unique`},
		{"PromptOf300CharactersPasses", formArgs(questionArg("a", "text", setField("prompt", strings.Repeat("p", 300)+"\n"))), ""},
		{"PromptOf301CharactersFails", formArgs(questionArg("a", "text", setField("prompt", strings.Repeat("p", 301)))), "questions[0].prompt must be 1..300 characters after trimming"},
		{"BlankPromptFails", formArgs(questionArg("a", "text", setField("prompt", " "))), "questions[0].prompt must be 1..300 characters after trimming"},
		{"AnUnknownTypeFails", formArgs(questionArg("a", "date")), "questions[0].type must be single, multi or text"},

		{"SingleWithFourOptionsPasses", formArgs(questionArg("a", "single", setField("options", optionArgs(4)))), ""},
		{"SingleWithFiveOptionsFails", formArgs(questionArg("a", "single", setField("options", optionArgs(5)))), "questions[0].options: a single question allows at most 4 options; it has 5"},
		{"SingleWithOneOptionPasses", formArgs(questionArg("a", "single", setField("options", optionArgs(1)))), ""},
		{"SingleWithoutOptionsFails", formArgs(questionArg("a", "single", setField("options", []any{}))), "questions[0].options: a single question needs at least 1 option"},
		{"SingleWithOptionsMissingFails", formArgs(map[string]any{"id": "a", "prompt": "p", "type": "single"}), "a single question needs at least 1 option"},
		{"MultiWithTenOptionsPasses", formArgs(questionArg("a", "multi", setField("options", optionArgs(10)))), ""},
		{"MultiWithElevenOptionsFails", formArgs(questionArg("a", "multi", setField("options", optionArgs(11)))), "questions[0].options: a multi question allows at most 10 options; it has 11"},
		{"MultiWithoutOptionsFails", formArgs(questionArg("a", "multi", setField("options", []any{}))), "a multi question needs at least 1 option"},
		{"TextWithAnOptionFails", formArgs(questionArg("a", "text", setField("options", optionArgs(1)))), "questions[0].options: a text question takes no options; it has 1"},
		{"TextWithEmptyOptionsPasses", formArgs(questionArg("a", "text", setField("options", []any{}))), ""},
		{"OptionLabelOf60CharactersPasses", formArgs(questionArg("a", "single", setField("options", []any{opt(" "+strings.Repeat("l", 60)+" ", "v")}))), ""},
		{"OptionLabelOf61CharactersFails", formArgs(questionArg("a", "single", setField("options", []any{opt("x", "w"), opt(strings.Repeat("l", 61), "v")}))),
			"questions[0].options[1].label must be 1..60 characters after trimming"},
		{"BlankOptionLabelFails", formArgs(questionArg("a", "single", setField("options", []any{opt(" ", "v")}))), "questions[0].options[0].label must be 1..60 characters after trimming"},
		{"OptionValueOf60CharactersPasses", formArgs(questionArg("a", "single", setField("options", []any{opt("l", strings.Repeat("v", 60))}))), ""},
		{"OptionValueOf61CharactersFails", formArgs(questionArg("a", "single", setField("options", []any{opt("l", strings.Repeat("v", 61))}))), "questions[0].options[0].value must be 1..60 characters after trimming"},
		{"MissingOptionValueFails", formArgs(questionArg("a", "single", setField("options", []any{map[string]any{"label": "l"}}))), "questions[0].options[0].value must be 1..60 characters after trimming"},
		{"AnUnknownOptionKeyFails", formArgs(questionArg("a", "single", setField("options", []any{map[string]any{"label": "l", "value": "v", "hint": "h"}}))), `questions[0].options[0] has the unknown key "hint"`},
		{"OptionValuesEqualAfterTrimmingFail", formArgs(questionArg("a", "multi", setField("options", []any{opt("A", "x"), opt("B", "y"), opt("C", " x ")}))),
			`questions[0].options[2].value "x" repeats questions[0].options[0].value; option values must be unique`},
		{"RepeatedLabelsPass", formArgs(questionArg("a", "multi", setField("options", []any{opt("Same", "x"), opt("Same", "y")}))), ""},
		{"NonBooleanRequiredFails", formArgs(questionArg("a", "text", setField("required", "yes"))), "questions[0].required must be true or false"},
		{"NonBooleanAllowCustomFails", formArgs(questionArg("a", "single", setField("allowCustom", 1))), "questions[0].allowCustom must be true or false"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseForm(c.args)
			switch {
			case c.refusal == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.refusal != "" && err == nil:
				t.Fatalf("accepted; want a refusal containing %q", c.refusal)
			case c.refusal != "" && !strings.Contains(err.Error(), c.refusal):
				t.Fatalf("refusal %q does not contain %q", err, c.refusal)
			}
		})
	}
}

func TestParseFormAppliesDefaults(t *testing.T) {
	f, err := parseForm(map[string]any{"title": " Deploy ", "questions": []any{
		map[string]any{"id": "env", "prompt": " Where? ", "type": "single", "options": []any{
			map[string]any{"label": " Staging ", "value": " staging "}, map[string]any{"label": "Production", "value": "prod"}}},
		map[string]any{"id": "extras", "prompt": "Extras?", "type": "multi", "required": false, "allowCustom": false,
			"options": []any{map[string]any{"label": "Logs", "value": "logs"}}},
		map[string]any{"id": "notes", "prompt": "Notes?", "type": "text", "allowCustom": false},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := questionForm{title: "Deploy", presentation: "auto", questions: []store.Question{
		{ID: "env", Prompt: "Where?", Type: store.QuestionSingle, Required: true, AllowCustom: true,
			Options: []store.QuestionOption{{Label: "Staging", Value: "staging"}, {Label: "Production", Value: "prod"}}},
		{ID: "extras", Prompt: "Extras?", Type: store.QuestionMulti, Required: false, AllowCustom: false,
			Options: []store.QuestionOption{{Label: "Logs", Value: "logs"}}},
		{ID: "notes", Prompt: "Notes?", Type: store.QuestionText, Required: true, AllowCustom: true, Options: []store.QuestionOption{}},
	}}
	if !reflect.DeepEqual(f, want) {
		t.Errorf("parsed %+v\nwant %+v", f, want)
	}
}
