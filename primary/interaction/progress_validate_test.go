package interaction

import (
	"reflect"
	"strings"
	"testing"

	"github.com/turncli/turncli/primary/store"
)

// stepArg is a valid step argument; edit changes it.
func stepArg(id string, edit ...func(map[string]any)) map[string]any {
	s := map[string]any{"id": id, "title": "Step " + id, "status": "pending"}
	for _, f := range edit {
		f(s)
	}
	return s
}

// planArgs is valid report_progress arguments with steps.
func planArgs(steps ...any) map[string]any {
	if len(steps) == 0 {
		steps = []any{stepArg("a")}
	}
	return map[string]any{"title": "Plan", "steps": steps}
}

// manySteps is n valid steps with distinct ids.
func manySteps(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = stepArg("s" + strings.Repeat("x", i))
	}
	return out
}

func sourceArgs(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"url": "https://example.org/" + strings.Repeat("p", i), "text": "Source"}
	}
	return out
}

// httpsURLOf is an https URL of exactly n characters.
func httpsURLOf(n int) string {
	const head = "https://example.org/"
	return head + strings.Repeat("a", n-len(head))
}

func setField(key string, v any) func(map[string]any) { return func(m map[string]any) { m[key] = v } }

func withOneSource(src map[string]any) func(map[string]any) {
	return setField("sources", []any{src})
}

func TestParsePlanBoundaries(t *testing.T) {
	pad := func(s string) string { return "  " + s + "\t\n" }
	cases := []struct {
		name string
		args map[string]any
		// refusal is a fragment of the refusal; empty means the plan is accepted.
		refusal string
	}{
		{"TitleOf80CharactersPasses", map[string]any{"title": strings.Repeat("t", 80), "steps": []any{stepArg("a")}}, ""},
		{"TitleOf80CharactersPassesAfterTrimming", map[string]any{"title": pad(strings.Repeat("t", 80)), "steps": []any{stepArg("a")}}, ""},
		{"TitleOf80MultiByteCharactersPasses", map[string]any{"title": strings.Repeat("é", 80), "steps": []any{stepArg("a")}}, ""},
		{"TitleOf81CharactersFails", map[string]any{"title": strings.Repeat("t", 81), "steps": []any{stepArg("a")}}, "title must be 1..80 characters after trimming"},
		{"BlankTitleFails", map[string]any{"title": "  ", "steps": []any{stepArg("a")}}, "title must be 1..80 characters after trimming"},
		{"MissingTitleFails", map[string]any{"steps": []any{stepArg("a")}}, "title must be 1..80 characters after trimming"},
		{"NonStringTitleFails", map[string]any{"title": true, "steps": []any{stepArg("a")}}, "title must be a string"},
		{"UnknownTopLevelKeyFails", map[string]any{"title": "Plan", "steps": []any{stepArg("a")}, "mode": "x"}, `unknown argument "mode"; report_progress takes only title, steps`},

		{"OneStepPasses", planArgs(manySteps(1)...), ""},
		{"TwentyStepsPass", planArgs(manySteps(20)...), ""},
		{"TwentyOneStepsFail", planArgs(manySteps(21)...), "steps must hold 1..20 steps; it holds 21"},
		{"NoStepsFail", map[string]any{"title": "Plan", "steps": []any{}}, "steps must hold 1..20 steps; it holds 0"},
		{"MissingStepsFail", map[string]any{"title": "Plan"}, "steps must hold 1..20 steps"},
		{"StepsThatAreNotAnArrayFail", map[string]any{"title": "Plan", "steps": "a"}, "steps must be an array"},
		{"AStepThatIsNotAnObjectFails", planArgs(stepArg("a"), "b"), "steps[1] must be an object"},
		{"AnUnknownStepKeyFails", planArgs(stepArg("a", setField("owner", "me"))), `steps[0] has the unknown key "owner"`},

		{"StepIDOf80CharactersPasses", planArgs(stepArg(strings.Repeat("i", 80))), ""},
		{"StepIDOf81CharactersFails", planArgs(stepArg("a"), stepArg(strings.Repeat("i", 81))), "steps[1].id must be 1..80 characters after trimming"},
		{"BlankStepIDFails", planArgs(stepArg(" ")), "steps[0].id must be 1..80 characters after trimming"},
		{"MissingStepIDFails", planArgs(map[string]any{"title": "x", "status": "pending"}), "steps[0].id must be 1..80 characters after trimming"},
		{"StepIDsEqualAfterTrimmingFail", planArgs(stepArg("a"), stepArg("b"), stepArg(" a ")), `steps[2].id "a" repeats steps[0].id; step ids must be unique after trimming`},

		{"StepTitleOf240CharactersPasses", planArgs(stepArg("a", setField("title", pad(strings.Repeat("t", 240))))), ""},
		{"StepTitleOf241CharactersFails", planArgs(stepArg("a"), stepArg("b"), stepArg("c", setField("title", strings.Repeat("t", 241)))), "steps[2].title must be 1..240 characters after trimming"},
		{"BlankStepTitleFails", planArgs(stepArg("a", setField("title", ""))), "steps[0].title must be 1..240 characters after trimming"},

		{"StatusPendingPasses", planArgs(stepArg("a", setField("status", "pending"))), ""},
		{"StatusInProgressPasses", planArgs(stepArg("a", setField("status", "in_progress"))), ""},
		{"StatusCompletePasses", planArgs(stepArg("a", setField("status", "complete"))), ""},
		{"StatusErrorPasses", planArgs(stepArg("a", setField("status", "error"))), ""},
		{"AnUnknownStatusFails", planArgs(stepArg("a", setField("status", "done"))), "steps[0].status must be one of pending, in_progress, complete, error"},
		{"AMissingStatusFails", planArgs(map[string]any{"id": "a", "title": "x"}), "steps[0].status must be one of pending, in_progress, complete, error"},
		{"OneInProgressAmongOthersPasses", planArgs(stepArg("a", setField("status", "complete")), stepArg("b", setField("status", "in_progress")), stepArg("c")), ""},
		{"TwoInProgressFail", planArgs(stepArg("a", setField("status", "in_progress")), stepArg("b"), stepArg("c", setField("status", "in_progress"))),
			"steps[0] and steps[2] are both in_progress; at most one step may be in_progress"},

		{"DetailsOf2000CharactersPass", planArgs(stepArg("a", setField("details", pad(strings.Repeat("d", 2000))))), ""},
		{"DetailsOf2001CharactersFail", planArgs(stepArg("a", setField("details", strings.Repeat("d", 2001)))), "steps[0].details must be at most 2000 characters after trimming"},
		{"EmptyDetailsPass", planArgs(stepArg("a", setField("details", ""))), ""},
		{"OutputOf2000CharactersPasses", planArgs(stepArg("a", setField("output", strings.Repeat("o", 2000)))), ""},
		{"OutputOf2001CharactersFails", planArgs(stepArg("a", setField("output", strings.Repeat("o", 2001)))), "steps[0].output must be at most 2000 characters after trimming"},

		{"TenSourcesPass", planArgs(stepArg("a", setField("sources", sourceArgs(10)))), ""},
		{"ElevenSourcesFail", planArgs(stepArg("a", setField("sources", sourceArgs(11)))), "steps[0].sources must hold at most 10 sources; it holds 11"},
		{"NoSourcesPass", planArgs(stepArg("a", setField("sources", []any{}))), ""},
		{"AnUnknownSourceKeyFails", planArgs(stepArg("a", withOneSource(map[string]any{"url": "https://x.org", "text": "x", "title": "y"}))), `steps[0].sources[0] has the unknown key "title"`},
		{"URLOf2000CharactersPasses", planArgs(stepArg("a", withOneSource(map[string]any{"url": httpsURLOf(2000), "text": "x"}))), ""},
		{"URLOf2001CharactersFails", planArgs(stepArg("a", withOneSource(map[string]any{"url": httpsURLOf(2001), "text": "x"}))), "steps[0].sources[0].url must be at most 2000 characters"},
		{"URLWithLeadingSpaceFails", planArgs(stepArg("a", withOneSource(map[string]any{"url": " https://x.org", "text": "x"}))), "steps[0].sources[0].url must not begin or end with whitespace"},
		{"URLWithTrailingNewlineFails", planArgs(stepArg("a", withOneSource(map[string]any{"url": "https://x.org\n", "text": "x"}))), "must not begin or end with whitespace"},
		{"HTTPURLPasses", planArgs(stepArg("a", withOneSource(map[string]any{"url": "http://x.org:8080/a?b=c#d", "text": "x"}))), ""},
		{"FTPURLFails", planArgs(stepArg("a", withOneSource(map[string]any{"url": "ftp://x.org/f", "text": "x"}))), "steps[0].sources[0].url must be an absolute http or https URL with a host"},
		{"RelativeURLFails", planArgs(stepArg("a", withOneSource(map[string]any{"url": "/docs/a", "text": "x"}))), "must be an absolute http or https URL with a host"},
		{"URLWithoutHostFails", planArgs(stepArg("a", withOneSource(map[string]any{"url": "https:///path", "text": "x"}))), "must be an absolute http or https URL with a host"},
		{"URLWithOnlyAPortFails", planArgs(stepArg("a", withOneSource(map[string]any{"url": "http://:80/", "text": "x"}))), "must be an absolute http or https URL with a host"},
		{"OpaqueURLFails", planArgs(stepArg("a", withOneSource(map[string]any{"url": "https:x.org", "text": "x"}))), "must be an absolute http or https URL with a host"},
		{"EmptyURLFails", planArgs(stepArg("a", withOneSource(map[string]any{"url": "", "text": "x"}))), "must be an absolute http or https URL with a host"},
		{"SourceTextOf240CharactersPasses", planArgs(stepArg("a", withOneSource(map[string]any{"url": "https://x.org", "text": strings.Repeat("t", 240)}))), ""},
		{"SourceTextOf241CharactersFails", planArgs(stepArg("a", withOneSource(map[string]any{"url": "https://x.org", "text": strings.Repeat("t", 241)}))), "steps[0].sources[0].text must be 1..240 characters after trimming"},
		{"BlankSourceTextFails", planArgs(stepArg("a", withOneSource(map[string]any{"url": "https://x.org", "text": " "}))), "steps[0].sources[0].text must be 1..240 characters after trimming"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parsePlan(c.args)
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

func TestParsePlanNormalizes(t *testing.T) {
	p, err := parsePlan(map[string]any{"title": "  Release  ", "steps": []any{
		map[string]any{"id": " build ", "title": " Build it ", "status": "complete", "details": "  ok  ", "output": "\tdone\n",
			"sources": []any{map[string]any{"url": "https://ci.example.org/1", "text": " CI run "}}},
		map[string]any{"id": "test", "title": "Test it", "status": "in_progress"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := progressPlan{title: "Release", steps: []store.ProgressStep{
		{ID: "build", Title: "Build it", Status: store.StepComplete, Details: "ok", Output: "done",
			Sources: []store.ProgressSource{{URL: "https://ci.example.org/1", Text: "CI run"}}},
		{ID: "test", Title: "Test it", Status: store.StepInProgress, Sources: []store.ProgressSource{}},
	}}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("parsed %+v\nwant %+v", p, want)
	}
}
