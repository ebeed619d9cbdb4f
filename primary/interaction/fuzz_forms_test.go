package interaction

import (
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/primary/store"
)

// FuzzReportProgressArgs checks report_progress's arguments: an accepted plan obeys every
// rule of the contract, holds exactly the steps given (trimmed, in order), and written back as
// arguments is accepted again as the same plan.
func FuzzReportProgressArgs(f *testing.F) {
	step := `{"id":"a","title":"Build","status":"in_progress","details":"d","output":"o","sources":[{"url":"https://example.org/x","text":"Docs"}]}`
	for _, s := range []string{
		`{"title":"Plan","steps":[` + step + `]}`,
		`{"title":"Plan","steps":[{"id":"a","title":"A","status":"in_progress"},{"id":"b","title":"B","status":"in_progress"}]}`,
		`{"title":"Plan","steps":[{"id":" a ","title":"A","status":"pending"},{"id":"a","title":"B","status":"complete"}]}`,
		`{"title":"Plan","steps":[]}`, `{"title":" ","steps":[` + step + `]}`, `{"steps":[` + step + `]}`,
		`{"title":"Plan","steps":[` + strings.Repeat(`{"id":"s","title":"S","status":"error"},`, 20) + `]}`,
		`{"title":"Plan","steps":[{"id":"a","title":"A","status":"done"}]}`,
		`{"title":"Plan","steps":[{"id":"a","title":"A","status":"pending","sources":[{"url":" https://example.org","text":"x"}]}]}`,
		`{"title":"Plan","steps":[{"id":"a","title":"A","status":"pending","sources":[{"url":"ftp://example.org","text":"x"}]}]}`,
		`{"title":"Plan","steps":[{"id":"a","title":"A","status":"pending","sources":[{"url":"http://:80/","text":"x"}]}]}`,
		`{"title":"Plan","steps":[{"id":"a","title":"A","status":"pending","sources":[{"url":"https://[::1]:8/p?q#f","text":"x"}]}]}`,
		`{"title":"Plan","steps":[{"id":"a","title":"A","status":"pending","extra":1}]}`,
		`{"title":"Plan","steps":[{"id":"a","title":"A","status":"pending"}],"extra":1}`,
		`{"title":"Plän 😀","steps":[{"id":"\u0000","title":"A","status":"complete","details":"\u2028"}]}`,
	} {
		f.Add([]byte(s))
	}
	for _, n := range []int{MaxProgressTitle, MaxProgressTitle + 1} {
		title, _ := canonjson.Marshal(strings.Repeat("é", n))
		f.Add([]byte(`{"title":` + string(title) + `,"steps":[` + step + `]}`))
	}
	for _, n := range []int{MaxSourceURL, MaxSourceURL + 1} {
		u := "https://example.org/" + strings.Repeat("a", n-len("https://example.org/"))
		f.Add([]byte(`{"title":"Plan","steps":[{"id":"a","title":"A","status":"pending","sources":[{"url":"` + u + `","text":"x"}]}]}`))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		args, ok := fuzzArgs(data)
		if !ok {
			return
		}
		p, err := parsePlan(args)
		if err != nil {
			checkRefusal(t, data, err)
			return
		}
		checkPlan(t, data, args, p)
		again, err := parsePlan(planArguments(p))
		if err != nil || !reflect.DeepEqual(again, p) {
			t.Fatalf("accepted plan %+v is not accepted again as itself: %+v, %v", p, again, err)
		}
	})
}

// checkPlan checks an accepted plan against the contract's rules and the arguments it came
// from.
func checkPlan(t *testing.T, data []byte, args map[string]any, p progressPlan) {
	t.Helper()
	fail := func(rule string) { t.Helper(); t.Fatalf("arguments %.300q accepted, but %s", data, rule) }
	if !trimmedChars(p.title, 1, 80) || p.title != strings.TrimSpace(args["title"].(string)) {
		fail("the title breaks its rule or is not the one given")
	}
	raw := args["steps"].([]any)
	if len(p.steps) < 1 || len(p.steps) > 20 || len(p.steps) != len(raw) {
		fail("the steps are not 1..20, or not the ones given")
	}
	ids, inProgress := map[string]bool{}, 0
	for i, st := range p.steps {
		given := raw[i].(map[string]any)
		trimmedAs := func(key, got string) bool {
			s, _ := given[key].(string)
			return got == strings.TrimSpace(s)
		}
		switch {
		case !trimmedChars(st.ID, 1, 80) || ids[st.ID] || !trimmedAs("id", st.ID):
			fail("a step id breaks its rule")
		case !trimmedChars(st.Title, 1, 240) || !trimmedAs("title", st.Title):
			fail("a step title breaks its rule")
		case !trimmedChars(st.Details, 0, 2000) || !trimmedAs("details", st.Details),
			!trimmedChars(st.Output, 0, 2000) || !trimmedAs("output", st.Output):
			fail("a step's details or output break their rule")
		case string(st.Status) != given["status"]:
			fail("a step's status is not the one given")
		case len(st.Sources) > 10:
			fail("a step has more than 10 sources")
		}
		ids[st.ID] = true
		switch st.Status {
		case store.StepInProgress:
			inProgress++
		case store.StepPending, store.StepComplete, store.StepError:
		default:
			fail("a step's status is not one of the four")
		}
		for _, src := range st.Sources {
			u, err := url.Parse(src.URL)
			if utf8.RuneCountInString(src.URL) > 2000 || src.URL != strings.TrimSpace(src.URL) || err != nil ||
				(u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
				fail("a source URL breaks its rule")
			}
			if !trimmedChars(src.Text, 1, 240) {
				fail("a source text breaks its rule")
			}
		}
	}
	if inProgress > 1 {
		fail("more than one step is in_progress")
	}
}

// planArguments writes a plan back as report_progress arguments.
func planArguments(p progressPlan) map[string]any {
	steps := make([]any, 0, len(p.steps))
	for _, st := range p.steps {
		sources := make([]any, 0, len(st.Sources))
		for _, src := range st.Sources {
			sources = append(sources, map[string]any{"url": src.URL, "text": src.Text})
		}
		steps = append(steps, map[string]any{"id": st.ID, "title": st.Title, "status": string(st.Status),
			"details": st.Details, "output": st.Output, "sources": sources})
	}
	return map[string]any{"title": p.title, "steps": steps}
}

// contractQuestionID is the contract's pattern of a question id.
var contractQuestionID = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,39}$`)

// FuzzAskQuestionsArgs checks ask_questions's arguments: an accepted form obeys every rule of
// the contract with its defaults applied, and written back as arguments is accepted again as
// the same form.
func FuzzAskQuestionsArgs(f *testing.F) {
	single := `{"id":"env","prompt":"Which environment?","type":"single","options":[{"label":"Staging","value":"stg"},{"label":"Production","value":"prod"}]}`
	for _, s := range []string{
		`{"title":"Deploy","questions":[` + single + `]}`,
		`{"title":"Deploy","presentation":"message","questions":[` + single + `,{"id":"why","prompt":"Why?","type":"text","required":false,"allowCustom":false}]}`,
		`{"title":"Deploy","presentation":"message","questions":[` + strings.Repeat(`{"id":"q","prompt":"P","type":"text"},`, 4) + `{"id":"q5","prompt":"P","type":"text"}]}`,
		`{"title":"Deploy","presentation":"popup","questions":[` + single + `]}`,
		`{"title":"Deploy","questions":[{"id":"a","prompt":"P","type":"single","options":[{"label":"A","value":"v"},{"label":"B","value":" v "}]}]}`,
		`{"title":"Deploy","questions":[{"id":"a","prompt":"P","type":"single","options":[` + strings.Repeat(`{"label":"L","value":"v"},`, 4) + `{"label":"L","value":"w"}]}]}`,
		`{"title":"Deploy","questions":[{"id":"a","prompt":"P","type":"multi","options":[]}]}`,
		`{"title":"Deploy","questions":[{"id":"a","prompt":"P","type":"text","options":[{"label":"A","value":"a"}]}]}`,
		`{"title":"Deploy","questions":[{"id":"1a","prompt":"P","type":"text"}]}`,
		`{"title":"Deploy","questions":[{"id":"a` + strings.Repeat("b", 39) + `","prompt":"P","type":"text"}]}`,
		`{"title":"Deploy","questions":[{"id":"a` + strings.Repeat("b", 40) + `","prompt":"P","type":"text"}]}`,
		`{"title":"Deploy","questions":[{"id":"a\n","prompt":"P","type":"text"}]}`,
		`{"title":"Deploy","questions":[{"id":"a","prompt":"P","type":"text","required":"yes"}]}`,
		`{"title":"Deploy","questions":[{"id":"a","prompt":"P","type":"text"},{"id":"a","prompt":"Q","type":"text"}]}`,
		`{"title":"Déployer 🚀","questions":[{"id":"é","prompt":"\u0000","type":"text","hint":1}]}`,
		`{"title":"Deploy","questions":[]}`, `{"questions":[` + single + `]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		args, ok := fuzzArgs(data)
		if !ok {
			return
		}
		form, err := parseForm(args)
		if err != nil {
			checkRefusal(t, data, err)
			return
		}
		checkForm(t, data, args, form)
		again, err := parseForm(formArguments(form))
		if err != nil || !reflect.DeepEqual(again, form) {
			t.Fatalf("accepted form %+v is not accepted again as itself: %+v, %v", form, again, err)
		}
	})
}

// checkForm checks an accepted form against the contract's rules and the arguments it came
// from.
func checkForm(t *testing.T, data []byte, args map[string]any, form questionForm) {
	t.Helper()
	fail := func(rule string) { t.Helper(); t.Fatalf("arguments %.300q accepted, but %s", data, rule) }
	if !trimmedChars(form.title, 1, 120) || form.title != strings.TrimSpace(args["title"].(string)) {
		fail("the title breaks its rule or is not the one given")
	}
	wantPresentation, given := args["presentation"]
	if !given {
		wantPresentation = "auto"
	}
	switch form.presentation {
	case "auto", "modal", "message":
	default:
		fail("the presentation is not one of the three")
	}
	raw := args["questions"].([]any)
	switch {
	case form.presentation != wantPresentation:
		fail("the presentation is not the one given")
	case len(form.questions) < 1 || len(form.questions) > 20 || len(form.questions) != len(raw):
		fail("the questions are not 1..20, or not the ones given")
	case form.presentation == "message" && len(form.questions) > 4:
		fail("a message form has more than 4 questions")
	}
	ids := map[string]bool{}
	for i, q := range form.questions {
		given := raw[i].(map[string]any)
		prompt, _ := given["prompt"].(string)
		switch {
		case !contractQuestionID.MatchString(q.ID) || ids[q.ID] || q.ID != given["id"]:
			fail("a question id breaks its rule")
		case !trimmedChars(q.Prompt, 1, 300) || q.Prompt != strings.TrimSpace(prompt):
			fail("a prompt breaks its rule")
		case string(q.Type) != given["type"]:
			fail("a question's type is not the one given")
		}
		ids[q.ID] = true
		most := map[store.QuestionType]int{store.QuestionSingle: 4, store.QuestionMulti: 10, store.QuestionText: 0}[q.Type]
		if n := len(q.Options); (q.Type == store.QuestionText) != (n == 0) || n > most {
			fail("a question has the wrong number of options for its type")
		}
		values := map[string]bool{}
		for _, o := range q.Options {
			if !trimmedChars(o.Label, 1, 60) || !trimmedChars(o.Value, 1, 60) || values[o.Value] {
				fail("an option breaks its rule")
			}
			values[o.Value] = true
		}
		wantRequired, ok := given["required"].(bool)
		if !ok {
			wantRequired = true
		}
		wantCustom, ok := given["allowCustom"].(bool)
		if !ok || q.Type == store.QuestionText {
			wantCustom = true
		}
		if q.Required != wantRequired || q.AllowCustom != wantCustom {
			fail("required or allowCustom is not the one given, or its default")
		}
	}
}

// formArguments writes a form back as ask_questions arguments.
func formArguments(form questionForm) map[string]any {
	questions := make([]any, 0, len(form.questions))
	for _, q := range form.questions {
		options := make([]any, 0, len(q.Options))
		for _, o := range q.Options {
			options = append(options, map[string]any{"label": o.Label, "value": o.Value})
		}
		questions = append(questions, map[string]any{"id": q.ID, "prompt": q.Prompt, "type": string(q.Type),
			"options": options, "required": q.Required, "allowCustom": q.AllowCustom})
	}
	return map[string]any{"title": form.title, "presentation": form.presentation, "questions": questions}
}
