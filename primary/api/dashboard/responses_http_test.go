package dashboard_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
)

// reportProgress runs report_progress with plan through mindroom-agent in the response's Bash.
func reportProgress(t *testing.T, env *testenv.Env, responseID, bashCallID string, plan any) {
	t.Helper()
	raw, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	cmd := "mindroom-agent tools call interaction.report_progress \"$(cat <<'JSON'\n" + string(raw) + "\nJSON\n)\""
	if run := env.RunBash(t, responseID, bashCallID, cmd); run.Result.GetExitCode() != 0 {
		t.Fatalf("report_progress: %q %q", run.Stdout, run.Stderr)
	}
}

func TestAPlanStepShowsItsOutputAndSources(t *testing.T) {
	env := testenv.Start(t)
	b := signIn(t, env, adminToken(t, env))
	id := env.Open(t, func(r *responsev1.OpenResponseRequest) { r.Flags = []string{"progress_report"} })
	reportProgress(t, env, id, "plan-1", map[string]any{"title": "Release", "steps": []map[string]any{
		{"id": "build", "title": "Build", "status": "complete", "details": "with -trimpath",
			"output": "built 3 binaries\n<b>ok</b>", "sources": []map[string]string{{"url": "https://example.org/build?a=1&b=2", "text": "Build <docs>"}}},
		{"id": "ship", "title": "Ship", "status": "pending"},
	}})
	_, page := b.get("/ui/responses")
	step := regexp.MustCompile(`(?s)<li class="step st-complete">.*?</li>\s*<li class="step st-pending">`).FindString(page)
	for _, want := range []string{
		`<span class="meta">— with -trimpath</span>`,
		"<pre class=\"step-output\">built 3 binaries\n&lt;b&gt;ok&lt;/b&gt;</pre>",
		`<a href="https://example.org/build?a=1&amp;b=2" rel="noopener noreferrer" target="_blank">Build &lt;docs&gt;</a>`,
	} {
		if !strings.Contains(step, want) {
			t.Errorf("the Build step lacks %q:\n%s", want, step)
		}
	}
	if strings.Contains(page, `<pre class="step-output"></pre>`) || strings.Count(page, `class="step-output"`) != 1 {
		t.Errorf("a step without output shows an output box:\n%s", page)
	}
}

func TestIdsStayOnOneLine(t *testing.T) {
	env := testenv.Start(t)
	b := signIn(t, env, adminToken(t, env))
	id := env.Open(t)
	callID := "0b5e7a8c-6a8e-4a55-9d3c-2f1e0c9b7d11"
	if run := env.RunBash(t, id, callID, "true"); run.Result.GetExitCode() != 0 {
		t.Fatalf("bash: %q", run.Stderr)
	}
	_, page := b.get("/ui/responses")
	for _, want := range []string{
		`<dt>Response</dt><dd><code class="id">` + id + `</code></dd>`,
		`<td><code class="id" title="` + callID + `">0b5e7a8c…</code></td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the Responses page lacks %q:\n%s", want, page)
		}
	}
	_, css := b.get("/ui/static/app.css")
	if !strings.Contains(css, "code.id, table.jobs code.id { white-space: nowrap; overflow-wrap: normal;") {
		t.Errorf("the style sheet does not keep ids on one line")
	}
}
