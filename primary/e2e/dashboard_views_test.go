package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/worker"
)

// TestDashboardResponsesWorkersAndConversations drives the Responses, Workers and
// Conversations views in Chromium against a real primary with a real worker and real Bash.
func TestDashboardResponsesWorkersAndConversations(t *testing.T) {
	rig := startDashboardRig(t)
	browser, env := rig.browser, rig.env
	ctx := context.Background()
	admin := operatorTab(t, browser)
	dashboardSignIn(t, admin, env, rig.adminCred)

	t.Run("WorkersShowTheirCommandsLive", func(t *testing.T) {
		env.StartWorker(t, "key-a", "wk-ui", func(c *worker.Config) { c.Capacity = 2 })
		step(t, admin, "open the workers", chromedp.Navigate(env.HTTPURL+"/ui/workers"), chromedp.WaitVisible("#worker-wk-ui"))
		if got := text(t, admin, "#worker-wk-ui td:nth-child(3)"); got != "0" {
			t.Fatalf("commands before: %q", got)
		}
		gate := filepath.Join(t.TempDir(), "gate")
		id := env.Open(t, func(r *responsev1.OpenResponseRequest) { r.WorkerKey = "key-a" })
		done := make(chan testenv.BashRun, 1)
		go func() {
			done <- env.RunBash(t, id, "ui-gate", fmt.Sprintf("while [ ! -e %q ]; do sleep 0.02; done", gate))
		}()
		waitInPage(t, admin, "the running command without a reload", `document.querySelector("#worker-wk-ui td:nth-child(3)").textContent === "1"`)
		screenshot(t, admin, "workers")
		os.WriteFile(gate, nil, 0o644)
		<-done
		waitInPage(t, admin, "the command gone", `document.querySelector("#worker-wk-ui td:nth-child(3)").textContent === "0"`)
	})

	t.Run("ResponsesShowTheirPlanAsStepsInertAndLive", func(t *testing.T) {
		id := env.Open(t, func(r *responsev1.OpenResponseRequest) { r.Flags = []string{"progress_report"} })
		plan := func(status string) string {
			return "mindroom-agent tools call interaction.report_progress " + agentJSON(map[string]any{
				"title": "Migrate " + planted, "steps": []map[string]string{
					{"id": "copy", "title": "Copy <i>rows</i>", "status": "complete"},
					{"id": "swap", "title": "Swap tables", "status": status, "details": planted},
				}})
		}
		if run := env.RunBash(t, id, "ui-plan", plan("in_progress")); run.Result.GetExitCode() != 0 {
			t.Fatalf("report_progress: %q %q", run.Stdout, run.Stderr)
		}
		step(t, admin, "open the responses", chromedp.Navigate(env.HTTPURL+"/ui/responses"), chromedp.WaitVisible("#response-"+id+" ol.steps"))
		if got := text(t, admin, "#response-"+id+" ol.steps li:first-child"); !strings.Contains(got, "Copy <i>rows</i>") {
			t.Errorf("the first step shows as %q, want its markup literally", got)
		}
		if got := text(t, admin, "#response-"+id+" h3"); got != "Migrate "+planted {
			t.Errorf("the plan's title shows as %q", got)
		}
		screenshot(t, admin, "responses")
		env.RunBash(t, id, "ui-plan-2", plan("complete"))
		waitInPage(t, admin, "the second step complete without a reload",
			`document.querySelector("#response-`+id+` ol.steps li:nth-child(2)").classList.contains("st-complete")`)
		if !eval[bool](t, admin, noSideEffect) {
			t.Fatal("agent-supplied markup ran in the Responses view")
		}
	})

	conversation := env.HTTPURL + "/ui/conversations?channel=%21room%3Aexample.org&thread=%24thread&agent=tester"
	t.Run("AnAdminSetsTheModeAndSeesARefusedShellModesProblems", func(t *testing.T) {
		step(t, admin, "open the conversation", chromedp.Navigate(conversation), chromedp.WaitVisible("#set-mode"))
		// Set and submit in one script: the live fragment may be refetched between two steps.
		eval[bool](t, admin, `(() => { const f = document.querySelector("#set-mode"); f.elements.mode.value = "auto"; f.requestSubmit(); return true })()`)
		step(t, admin, "see the mode set", chromedp.WaitVisible(".flash"))
		if got := text(t, admin, "#conversation-mode"); !strings.HasPrefix(got, "auto") {
			t.Fatalf("conversation mode shows %q", got)
		}
		eval[bool](t, admin, `(() => { const f = document.querySelector("#set-shell"); f.elements.mode.value = "minimal";
			f.elements.worker_key.value = "key-b"; f.requestSubmit(); return true })()`)
		step(t, admin, "see the refusal", chromedp.WaitVisible(".flash"))
		if got := text(t, admin, ".flash"); !strings.HasPrefix(got, "Refused:") || !strings.Contains(got, "problem") {
			t.Fatalf("the refusal shows as %q", got)
		}
		if got := text(t, admin, "#shell-mode"); !strings.HasPrefix(got, "standard") {
			t.Fatalf("a refused change was saved: %q", got)
		}
		step(t, admin, "filter the audit log", chromedp.Navigate(conversation+"&action=conversation_mode.set"), chromedp.WaitVisible("#audit"))
		if got := text(t, admin, "#audit tbody"); !strings.Contains(got, "conversation_mode.set") || !strings.Contains(got, "admin") {
			t.Fatalf("audit rows: %q", got)
		}
		screenshot(t, admin, "conversations")
	})

	t.Run("AMemberSeesNoModeFormsAndTheServerRefusesTheirPost", func(t *testing.T) {
		member := operatorTab(t, browser)
		dashboardSignIn(t, member, env, rig.memberCred)
		step(t, member, "open the conversation", chromedp.Navigate(conversation), chromedp.WaitReady("body"))
		if !eval[bool](t, member, `document.querySelector("#modes") !== null`) {
			t.Fatalf("the member's page: %s", eval[string](t, member, "document.body.innerText"))
		}
		if eval[bool](t, member, `document.querySelector("#set-mode, #set-shell") !== null`) {
			t.Fatal("a member is shown the admins' mode forms")
		}
		code := eval[int](t, member, `fetch("/ui/conversations/mode", {method: "POST", credentials: "same-origin",
			headers: {"Content-Type": "application/x-www-form-urlencoded"},
			body: new URLSearchParams({csrf: document.querySelector('input[name="csrf"]').value, channel: "!room:example.org", thread: "$thread", mode: "admin"})
		}).then(r => r.status)`)
		if code != 403 {
			t.Fatalf("a member's mode change: HTTP %d, want 403", code)
		}
		if m, err := env.Primary.Internals().Store.ConversationMode(ctx, "!room:example.org", "$thread"); err != nil || m.Mode != store.ModeAuto {
			t.Fatalf("mode after the member's post: %+v %v", m, err)
		}
	})
}
