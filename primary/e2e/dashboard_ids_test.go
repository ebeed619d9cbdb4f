package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// TestDashboardKeepsIdsOnOneLine renders the Responses view in Chromium in a narrow page and
// checks that no id breaks over two lines: a UUID split in two reads as two ids.
func TestDashboardKeepsIdsOnOneLine(t *testing.T) {
	rig := startDashboardRig(t)
	env := rig.env
	admin := operatorTab(t, rig.browser)
	dashboardSignIn(t, admin, env, rig.adminCred)

	id := env.Open(t)
	callID := "0b5e7a8c-6a8e-4a55-9d3c-2f1e0c9b7d11"
	if run := env.RunBash(t, id, callID, "true"); run.Result.GetExitCode() != 0 {
		t.Fatalf("bash: %q", run.Stderr)
	}
	step(t, admin, "open the responses", chromedp.Navigate(env.HTTPURL+"/ui/responses"), chromedp.WaitVisible("#response-"+id+" table"))
	// Narrow the page as a phone would: the cells and the definition list must wrap elsewhere.
	eval[bool](t, admin, `(() => { document.querySelector("main").style.maxWidth = "16rem"; return true })()`)
	ids := eval[[]string](t, admin, `Array.from(document.querySelectorAll("code.id")).map(c => c.textContent)`)
	if len(ids) != 2 || ids[0] != id || ids[1] != "0b5e7a8c…" {
		t.Fatalf("ids shown %q, want the response's whole id and the Bash call's shortened", ids)
	}
	broken := eval[[]string](t, admin, `Array.from(document.querySelectorAll("code.id")).filter(c => c.getClientRects().length !== 1).map(c => c.textContent)`)
	if len(broken) != 0 {
		t.Errorf("ids broken over lines: %q", broken)
	}
	if got := eval[string](t, admin, `document.querySelector("td code.id").title`); got != callID {
		t.Errorf("the shortened id's title is %q, want the whole id", got)
	}
}
