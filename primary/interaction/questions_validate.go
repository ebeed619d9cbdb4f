package interaction

import (
	"fmt"
	"regexp"

	"github.com/turncli/turncli/primary/store"
)

// Limits of ask_questions (contract: interaction controls), in characters.
const (
	MaxQuestionsTitle   = 120
	MaxQuestions        = 20
	MaxMessageQuestions = 4 // with presentation "message"
	MaxQuestionPrompt   = 300
	MaxOptionText       = 60 // label and value
	MaxSingleOptions    = 4
	MaxMultiOptions     = 10
	MaxCustomAnswer     = 2000
)

// questionID is the pattern of a question's id.
var questionID = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,39}$`)

// questionForm is a valid ask_questions input with every default applied.
type questionForm struct {
	title        string
	presentation string
	questions    []store.Question
}

// parseForm checks ask_questions arguments against every rule of the contract and returns
// them normalized: trimmed, options [] when absent, required and allowCustom defaulted (and
// allowCustom always true for text questions). An error names the field and the rule.
func parseForm(args map[string]any) (questionForm, error) {
	top := fieldObject{m: args}
	if err := top.only("ask_questions", "title", "questions", "presentation"); err != nil {
		return questionForm{}, err
	}
	title, err := top.text("title", 1, MaxQuestionsTitle)
	if err != nil {
		return questionForm{}, err
	}
	presentation, err := top.str("presentation")
	if err != nil {
		return questionForm{}, err
	}
	if _, given := args["presentation"]; !given {
		presentation = "auto"
	}
	switch presentation {
	case "auto", "message", "modal":
	default:
		return questionForm{}, fmt.Errorf("presentation must be auto, message or modal")
	}
	raw, _, err := top.array("questions")
	if err != nil {
		return questionForm{}, err
	}
	if len(raw) < 1 || len(raw) > MaxQuestions {
		return questionForm{}, fmt.Errorf("questions must hold 1..%d questions; it holds %d", MaxQuestions, len(raw))
	}
	if presentation == "message" && len(raw) > MaxMessageQuestions {
		return questionForm{}, fmt.Errorf("presentation message allows at most %d questions; this request has %d (use auto or modal)", MaxMessageQuestions, len(raw))
	}
	f := questionForm{title: title, presentation: presentation, questions: make([]store.Question, 0, len(raw))}
	ids := map[string]int{}
	for i, v := range raw {
		q, err := parseQuestion(elemPath("questions", i), v)
		if err != nil {
			return questionForm{}, err
		}
		if first, ok := ids[q.ID]; ok {
			return questionForm{}, fmt.Errorf("questions[%d].id %q repeats questions[%d].id; question ids must be unique", i, q.ID, first)
		}
		ids[q.ID] = i
		f.questions = append(f.questions, q)
	}
	return f, nil
}

func parseQuestion(path string, v any) (store.Question, error) {
	o, err := readObject(path, v)
	if err != nil {
		return store.Question{}, err
	}
	if err := o.only("a question", "id", "prompt", "type", "options", "required", "allowCustom"); err != nil {
		return store.Question{}, err
	}
	q := store.Question{Options: []store.QuestionOption{}}
	if q.ID, err = o.str("id"); err != nil {
		return store.Question{}, err
	}
	if !questionID.MatchString(q.ID) {
		return store.Question{}, fmt.Errorf("%s must match %s: a letter, then at most 39 letters, digits, '_' or '-'", o.at("id"), questionID)
	}
	if q.Prompt, err = o.text("prompt", 1, MaxQuestionPrompt); err != nil {
		return store.Question{}, err
	}
	typ, err := o.str("type")
	if err != nil {
		return store.Question{}, err
	}
	q.Type = store.QuestionType(typ)
	most := 0
	switch q.Type {
	case store.QuestionSingle:
		most = MaxSingleOptions
	case store.QuestionMulti:
		most = MaxMultiOptions
	case store.QuestionText:
	default:
		return store.Question{}, fmt.Errorf("%s must be single, multi or text", o.at("type"))
	}
	options, _, err := o.array("options")
	if err != nil {
		return store.Question{}, err
	}
	switch {
	case q.Type == store.QuestionText && len(options) > 0:
		return store.Question{}, fmt.Errorf("%s: a text question takes no options; it has %d", o.at("options"), len(options))
	case q.Type != store.QuestionText && len(options) == 0:
		return store.Question{}, fmt.Errorf("%s: a %s question needs at least 1 option", o.at("options"), q.Type)
	case len(options) > most:
		return store.Question{}, fmt.Errorf("%s: a %s question allows at most %d options; it has %d", o.at("options"), q.Type, most, len(options))
	}
	values := map[string]int{}
	for j, ov := range options {
		opt, err := parseOption(elemPath(o.at("options"), j), ov)
		if err != nil {
			return store.Question{}, err
		}
		if first, ok := values[opt.Value]; ok {
			return store.Question{}, fmt.Errorf("%s %q repeats %s; option values must be unique",
				elemPath(o.at("options"), j)+".value", opt.Value, elemPath(o.at("options"), first)+".value")
		}
		values[opt.Value] = j
		q.Options = append(q.Options, opt)
	}
	if q.Required, err = o.boolean("required", true); err != nil {
		return store.Question{}, err
	}
	if q.AllowCustom, err = o.boolean("allowCustom", true); err != nil {
		return store.Question{}, err
	}
	if q.Type == store.QuestionText {
		q.AllowCustom = true // a text question is answered only in the person's own words
	}
	return q, nil
}

func parseOption(path string, v any) (store.QuestionOption, error) {
	o, err := readObject(path, v)
	if err != nil {
		return store.QuestionOption{}, err
	}
	if err := o.only("an option", "label", "value"); err != nil {
		return store.QuestionOption{}, err
	}
	var opt store.QuestionOption
	if opt.Label, err = o.text("label", 1, MaxOptionText); err != nil {
		return store.QuestionOption{}, err
	}
	if opt.Value, err = o.text("value", 1, MaxOptionText); err != nil {
		return store.QuestionOption{}, err
	}
	return opt, nil
}
