package dashboard_test

import (
	"strings"
	"testing"

	"github.com/turncli/turncli/internal/testenv"
)

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
