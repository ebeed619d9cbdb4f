package interaction_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/events"
	"github.com/turncli/turncli/primary/store"
)

// lists reports whether `mindroom-agent tools list` in the response lists the interaction
// function.
func lists(t *testing.T, env *testenv.Env, responseID, function string) bool {
	t.Helper()
	run := env.RunBash(t, responseID, "list-"+itoa(bashSeq.Add(1)), "mindroom-agent tools list --limit 1000")
	if run.Result.GetExitCode() != 0 {
		t.Fatalf("tools list: exit %d %s %s", run.Result.GetExitCode(), run.Stdout, run.Stderr)
	}
	return strings.Contains(run.Stdout, `"function":"`+function+`","toolkit":"interaction"`)
}

// describeExit runs `mindroom-agent tools describe interaction.<function>` and returns its
// exit code.
func describeExit(t *testing.T, env *testenv.Env, responseID, function string) int {
	t.Helper()
	run := env.RunBash(t, responseID, "describe-"+itoa(bashSeq.Add(1)), "mindroom-agent tools describe interaction."+function)
	return int(run.Result.GetExitCode())
}

// published drains the events already published to a subscription.
func published(ch <-chan events.Event) []events.Event {
	var out []events.Event
	for {
		select {
		case ev := <-ch:
			out = append(out, ev)
		default:
			return out
		}
	}
}

// TestReportProgressThroughTheCLI calls report_progress from real Bash with the real client
// and checks the advertisement, the fixed result, the saved snapshot and the live event.
func TestReportProgressThroughTheCLI(t *testing.T) {
	env := start(t)
	ctx := context.Background()
	const thread = "$progress"
	withFlag := openAs(t, env, stranger, thread, func(r *responsev1.OpenResponseRequest) { r.Flags = []string{"progress_report"} })
	without := openAs(t, env, stranger, thread)
	feed, stop := env.Primary.Internals().Events.Subscribe(0)
	defer stop()

	snapshots := func(t *testing.T, responseID string) []store.ProgressSnapshot {
		t.Helper()
		ps, err := env.Primary.Internals().Interaction.Progress.ListProgress(ctx, store.ProgressFilter{ResponseID: responseID})
		if err != nil {
			t.Fatal(err)
		}
		return ps
	}

	t.Run("OfferedOnlyToResponsesWithTheProgressReportFlag", func(t *testing.T) {
		if !lists(t, env, withFlag, "report_progress") {
			t.Error("a response with the progress_report flag does not list report_progress")
		}
		if lists(t, env, without, "report_progress") {
			t.Error("a response without the flag lists report_progress")
		}
		if code := describeExit(t, env, without, "report_progress"); code != 2 {
			t.Errorf("describe without the flag: exit %d, want 2", code)
		}
		refused(t, callTool(t, env, without, "interaction.report_progress", `{"title":"x","steps":[{"id":"a","title":"b","status":"pending"}]}`),
			`Unknown function "report_progress"`)
		if n := len(snapshots(t, without)); n != 0 {
			t.Errorf("a response without the flag saved %d snapshots", n)
		}
	})

	t.Run("AValidPlanGetsTheFixedResultAndIsSavedTrimmed", func(t *testing.T) {
		published(feed)
		r := callTool(t, env, withFlag, "interaction.report_progress", jsonArgs(t, map[string]any{
			"title": "  Release 1.2  ",
			"steps": []any{
				map[string]any{"id": " build ", "title": " Build ", "status": "complete", "output": " ok ",
					"sources": []any{map[string]any{"url": "https://ci.example.org/run/1", "text": " CI "}}},
				map[string]any{"id": "test", "title": "Test", "status": "in_progress", "details": "unit and e2e"},
				map[string]any{"id": "ship", "title": "Ship", "status": "pending"},
			},
		}))
		if r.code != 0 || r.status != "completed" || r.outcome != "Foreground Slack Plan accepted." {
			t.Fatalf("want the fixed result; got %s", r)
		}
		ps := snapshots(t, withFlag)
		if len(ps) != 1 {
			t.Fatalf("%d snapshots, want 1", len(ps))
		}
		p := ps[0]
		if p.Title != "Release 1.2" || p.Channel != channel || p.Thread != thread || p.Agent != agent || p.Requester != stranger || p.UpdatedAt.IsZero() {
			t.Errorf("snapshot %+v", p)
		}
		want := `[{"id":"build","title":"Build","status":"complete","details":"","output":"ok","sources":[{"url":"https://ci.example.org/run/1","text":"CI"}]},` +
			`{"id":"test","title":"Test","status":"in_progress","details":"unit and e2e","output":"","sources":[]},` +
			`{"id":"ship","title":"Ship","status":"pending","details":"","output":"","sources":[]}]`
		if string(p.Steps) != want {
			t.Errorf("steps %s\nwant  %s", p.Steps, want)
		}
		evs := published(feed)
		if len(evs) != 1 || evs[0].Kind != "progress.updated" || evs[0].Subject != "response/"+withFlag {
			t.Fatalf("events %+v, want one progress.updated", evs)
		}
		data, _ := evs[0].Data.(map[string]any)
		if data["title"] != "Release 1.2" || len(data["steps"].([]any)) != 3 {
			t.Errorf("event data %v", data)
		}
	})

	t.Run("ANewReportReplacesThePreviousOne", func(t *testing.T) {
		r := callTool(t, env, withFlag, "interaction.report_progress",
			`{"title":"Release 1.2","steps":[{"id":"build","title":"Build","status":"complete"},{"id":"test","title":"Test","status":"error","output":"2 failed"}]}`)
		if r.code != 0 || r.outcome != "Foreground Slack Plan accepted." {
			t.Fatalf("got %s", r)
		}
		ps := snapshots(t, withFlag)
		var steps []store.ProgressStep
		if len(ps) != 1 || json.Unmarshal(ps[0].Steps, &steps) != nil {
			t.Fatalf("snapshots %+v", ps)
		}
		ids := []string{}
		for _, s := range steps {
			ids = append(ids, s.ID+":"+string(s.Status))
		}
		if !reflect.DeepEqual(ids, []string{"build:complete", "test:error"}) {
			t.Errorf("steps after the second report: %v", ids)
		}
	})

	t.Run("AnInvalidPlanFailsNamingTheRuleAndKeepsThePreviousOne", func(t *testing.T) {
		before := snapshots(t, withFlag)
		for _, c := range []struct{ args, rule string }{
			{jsonArgs(t, map[string]any{"title": "x", "steps": []any{
				map[string]any{"id": "a", "title": "A", "status": "pending"},
				map[string]any{"id": "b", "title": strings.Repeat("t", 241), "status": "pending"},
			}}), "steps[1].title must be 1..240 characters after trimming"},
			{`{"title":"x","steps":[{"id":"a","title":"A","status":"in_progress"},{"id":"b","title":"B","status":"in_progress"}]}`,
				"at most one step may be in_progress"},
			{`{"title":"x","steps":[{"id":"a","title":"A","status":"pending","sources":[{"url":" https://x.org","text":"x"}]}]}`,
				"steps[0].sources[0].url must not begin or end with whitespace"},
			// The schema refuses what it describes (the status enum), naming where.
			{`{"title":"x","steps":[{"id":"a","title":"A","status":"done"}]}`, "Invalid tool arguments"},
		} {
			refused(t, callTool(t, env, withFlag, "interaction.report_progress", c.args), c.rule)
		}
		if after := snapshots(t, withFlag); !reflect.DeepEqual(after, before) {
			t.Errorf("a refused report changed the snapshot: %+v", after)
		}
	})
}
