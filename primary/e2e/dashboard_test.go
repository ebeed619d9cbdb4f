package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/operators"
	"github.com/turncli/turncli/primary/store"
)

// The dashboard in a real headless Chromium against a real primary, real Bash and the real
// mindroom-agent. One Chromium serves every subtest; each operator gets their own browser
// context (their own cookies).

const chromiumPath = "/usr/bin/chromium"

// noSideEffect is true while none of the markup the tests plant (in details, commands, output,
// prompts) has run: each would set window.__pwned.
const noSideEffect = `window.__pwned === undefined`

// planted is agent-supplied markup that would set window.__pwned if it ever ran.
const planted = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>`

func startChromium(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("TURNCLI_REQUIRE_CHROMIUM") == "1" {
			t.Fatalf("Chromium is required (TURNCLI_REQUIRE_CHROMIUM=1) but %s is missing: %v", chromiumPath, err)
		}
		t.Skipf("the dashboard's browser tests need Chromium at %s (apt-get install chromium); skipped", chromiumPath)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromiumPath), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900))
	browser, cancelBrowser := chromedp.NewContext(alloc, chromedp.WithLogf(t.Logf))
	if err := chromedp.Do(browser); err != nil { // starts Chromium
		cancelBrowser()
		cancelAlloc()
		t.Fatalf("start Chromium: %v", err)
	}
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	return browser
}

// operatorTab is a tab in a browser context of its own, for one operator.
func operatorTab(t *testing.T, browser context.Context) context.Context {
	t.Helper()
	tab, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	return tab
}

// step runs browser actions bounded by a timeout.
func step(t *testing.T, tab context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression in the page (through DevTools, which the page's
// Content-Security-Policy does not restrict).
func eval[T any](t *testing.T, tab context.Context, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitFor waits until expr is true in the page, without reloading it.
func waitInPage(t *testing.T, tab context.Context, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ctx, cancel := context.WithTimeout(tab, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s (%s): last error %v", what, expr, err)
		}
		<-tick.C
	}
}

func text(t *testing.T, tab context.Context, sel string) string {
	t.Helper()
	return eval[string](t, tab, fmt.Sprintf(`document.querySelector(%q).textContent`, sel))
}

// screenshot saves the page as docs/screenshots/<view>.png, only when TURNCLI_SCREENSHOTS
// names a directory.
func screenshot(t *testing.T, tab context.Context, view string) {
	t.Helper()
	dir := os.Getenv("TURNCLI_SCREENSHOTS")
	if dir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(tab, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", view, err)
	}
	if err := os.WriteFile(filepath.Join(dir, view+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

func dashboardSignIn(t *testing.T, tab context.Context, env *testenv.Env, credential string) {
	t.Helper()
	step(t, tab, "sign in",
		chromedp.Navigate(env.HTTPURL+"/ui/signin"),
		chromedp.WaitVisible("#credential"),
		chromedp.SendKeys("#credential", credential),
		chromedp.Submit("#credential"),
		chromedp.WaitVisible("#me"))
}

// agentJSON is a single-quoted heredoc that hands JSON to mindroom-agent unchanged.
func agentJSON(v any) string {
	raw, _ := json.Marshal(v)
	return "\"$(cat <<'JSON'\n" + string(raw) + "\nJSON\n)\""
}

// dashboardRig is Chromium, a real primary, and the credentials of its first admin and of a
// member, "mia".
type dashboardRig struct {
	browser               context.Context
	env                   *testenv.Env
	adminCred, memberCred string
}

func startDashboardRig(t *testing.T) dashboardRig {
	t.Helper()
	browser := startChromium(t)
	env := testenv.Start(t)
	memberCred, err := operators.Add(context.Background(), env.Primary.Internals().Store, "mia", store.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	return dashboardRig{browser: browser, env: env, memberCred: memberCred,
		adminCred: strings.TrimSpace(readFile(t, filepath.Join(env.StateDir, "credentials", "operator-admin.token")))}
}

func TestDashboard(t *testing.T) {
	rig := startDashboardRig(t)
	browser, env, adminCred, memberCred := rig.browser, rig.env, rig.adminCred, rig.memberCred
	ctx := context.Background()
	admin := operatorTab(t, browser)
	if dir := os.Getenv("TURNCLI_SCREENSHOTS"); dir != "" {
		step(t, admin, "open the sign-in page", chromedp.Navigate(env.HTTPURL+"/ui/signin"), chromedp.WaitVisible("#credential"))
		screenshot(t, admin, "signin")
	}
	dashboardSignIn(t, admin, env, adminCred)
	member := operatorTab(t, browser)
	dashboardSignIn(t, member, env, memberCred)

	t.Run("ADurableApprovalAppearsLiveIsApprovedByAClickAndItsLogStreams", func(t *testing.T) {
		if _, err := env.Primary.Internals().Store.SetConversationMode(ctx, "!room:example.org", "$thread", store.ModeAuto, "test"); err != nil {
			t.Fatal(err)
		}
		id := env.Open(t)
		step(t, admin, "open the inbox", chromedp.Navigate(env.HTTPURL+"/ui/inbox"), chromedp.WaitVisible("#inbox"))
		// The job holds after its first lines until the test has seen them, so they are seen
		// while it runs however slowly the pages load.
		gate := filepath.Join(t.TempDir(), "gate")
		command := `printf '\033[32m%s\033[0m\n' 'green <b>not bold</b>'; echo '` + planted + `'; ` +
			`for i in 1 2 3; do echo "line-$i"; done; while [ ! -e ` + bashQuote(gate) + ` ]; do sleep 0.05; done; echo finished-marker`
		run := env.RunBash(t, id, "bg", "mindroom-agent tools call interaction.run_in_background "+
			agentJSON(map[string]string{"command": command, "label": "<b>deploy</b>"}))
		if run.Result.GetExitCode() != 0 {
			t.Fatalf("run_in_background: %q %q", run.Stdout, run.Stderr)
		}
		waitInPage(t, admin, "the approval to appear without a reload", `document.querySelector('article[id^="approval-"]') !== null`)
		if got := text(t, admin, `article[id^="approval-"] pre.command`); got != command {
			t.Errorf("the command shows as %q, want it literally %q", got, command)
		}
		screenshot(t, admin, "inbox")
		eval[bool](t, admin, `(() => { document.querySelector('article[id^="approval-"] button[value="approve"]').click(); return true })()`)
		step(t, admin, "see the approval taken", chromedp.WaitVisible(".flash"))

		step(t, admin, "open the jobs", chromedp.Navigate(env.HTTPURL+"/ui/jobs"), chromedp.WaitVisible(`tr[id^="job-"] a`))
		screenshot(t, admin, "jobs")
		// Read the link and follow it, rather than click a node the live list may replace
		// between finding and clicking it.
		jobURL := eval[string](t, admin, `document.querySelector('tr[id^="job-"] a').href`)
		step(t, admin, "open the job", chromedp.Navigate(jobURL), chromedp.WaitVisible("#job-log"))
		// The log streams in: lines show while the job still runs, then the rest.
		waitInPage(t, admin, "the first lines while the job runs",
			`document.querySelector('#job-log').textContent.includes('line-1') && !document.querySelector('#job-log').textContent.includes('finished-marker')`)
		if err := os.WriteFile(gate, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		waitInPage(t, admin, "the whole log", `document.querySelector('#job-log').textContent.includes('finished-marker')`)
		waitInPage(t, admin, "the job to show as finished", `document.querySelector('[data-job-running="false"]') !== null`)
		if got := text(t, admin, "#job-log span.fg-2"); got != "green <b>not bold</b>" {
			t.Errorf("the green output shows as %q", got)
		}
		if !strings.Contains(text(t, admin, "#job-log"), planted) {
			t.Errorf("the log does not show the markup literally: %q", text(t, admin, "#job-log"))
		}
		if n := eval[int](t, admin, `document.querySelectorAll('#job-log *:not(span), main img, main script').length`); n != 0 {
			t.Errorf("%d elements came from agent or job text", n)
		}
		if !eval[bool](t, admin, noSideEffect) {
			t.Error("markup from a command or its output ran")
		}
		screenshot(t, admin, "job")
	})

	t.Run("ARequestApprovalDecidedInOneBrowserDisappearsFromTheOther", func(t *testing.T) {
		id := env.Open(t, func(r *responsev1.OpenResponseRequest) { r.Conversation.Thread = "$approvals" })
		for _, tab := range []context.Context{admin, member} {
			step(t, tab, "open the inbox", chromedp.Navigate(env.HTTPURL+"/ui/inbox"), chromedp.WaitVisible("#inbox"))
		}
		details := "Ship the release? " + planted
		// The command's window stays open until the call it made settles: on the decision.
		asked := make(chan testenv.BashRun, 1)
		go func() {
			asked <- env.RunBash(t, id, "ask", "mindroom-agent tools call --timeout 0 interaction.request_approval "+
				agentJSON(map[string]string{"details": details, "title": "Release <i>now</i>"}))
		}()
		for _, tab := range []context.Context{admin, member} {
			waitInPage(t, tab, "the approval request in both browsers", `document.querySelector('article[id^="prompt-"]') !== null`)
			if got := text(t, tab, `article[id^="prompt-"] pre.details`); got != details {
				t.Errorf("details show as %q, want %q literally", got, details)
			}
		}
		eval[bool](t, admin, `(() => { document.querySelector('article[id^="prompt-"] button[value="approve"]').click(); return true })()`)
		waitInPage(t, member, "the request to close in the other browser", `document.querySelector('article[id^="prompt-"]') === null`)
		select {
		case <-asked:
		case <-time.After(30 * time.Second):
			t.Fatal("the agent's command did not end after the decision")
		}
		for _, tab := range []context.Context{admin, member} {
			if !eval[bool](t, tab, noSideEffect) {
				t.Error("markup from approval details ran")
			}
		}
	})

	t.Run("AQuestionFormIsSavedAsADraftReloadedAndSubmittedOnce", func(t *testing.T) {
		id := env.Open(t, func(r *responsev1.OpenResponseRequest) {
			r.RequesterId, r.Conversation.Thread = "admin", "$questions"
			r.Flags, r.Origin = []string{"requester_trusted"}, responsev1.Origin_ORIGIN_FOREGROUND
		})
		prompt := "Which colour? " + planted
		run := env.RunBash(t, id, "questions", "mindroom-agent tools call interaction.ask_questions "+agentJSON(map[string]any{
			"title": "Release checklist",
			"questions": []map[string]any{
				{"id": "colour", "prompt": prompt, "type": "single", "options": []map[string]string{{"label": "Red <b>", "value": "red"}, {"label": "Blue", "value": "blue"}}},
				{"id": "notes", "prompt": "Any notes?", "type": "text", "required": false},
			},
		}))
		if run.Result.GetExitCode() != 0 {
			t.Fatalf("ask_questions: %q %q", run.Stdout, run.Stderr)
		}
		step(t, admin, "open the questions", chromedp.Navigate(env.HTTPURL+"/ui/questions"),
			chromedp.WaitVisible(`li[id^="question-"] a`))
		screenshot(t, admin, "questions")
		formURL := eval[string](t, admin, `document.querySelector('li[id^="question-"] a').href`)
		step(t, admin, "open the form", chromedp.Navigate(formURL), chromedp.WaitVisible("#question-form"))
		if got := text(t, admin, "#q-colour legend"); !strings.Contains(got, prompt) {
			t.Errorf("the prompt shows as %q, want %q literally", got, prompt)
		}
		step(t, admin, "save a draft",
			chromedp.Click(`input[name="q-colour"][value="blue"]`),
			chromedp.SendKeys(`textarea[name="c-notes"]`, "ship on friday"),
			chromedp.Click("#save-draft"),
			chromedp.WaitVisible(".flash"),
			chromedp.Reload(),
			chromedp.WaitVisible("#question-form"))
		if !eval[bool](t, admin, `document.querySelector('input[name="q-colour"][value="blue"]').checked`) ||
			text(t, admin, `textarea[name="c-notes"]`) != "ship on friday" {
			t.Fatal("the draft did not survive a reload")
		}
		screenshot(t, admin, "question")
		step(t, admin, "submit", chromedp.Click("#submit-answers"), chromedp.WaitVisible(".flash"))
		if got := text(t, admin, "#form-status"); got != "submitted" {
			t.Errorf("status %q after submitting", got)
		}
		if eval[bool](t, admin, `document.querySelector('#submit-answers') !== null`) {
			t.Error("a submitted form still offers Submit")
		}
		replay := eval[int](t, admin, `(async () => {
			const form = new URLSearchParams({csrf: document.querySelector('input[name=csrf]').value,
				revision: document.querySelector('input[name=revision]').value, action: 'submit', 'q-colour': 'red'});
			return (await fetch(location.pathname + '/answers', {method: 'POST', body: form})).status;
		})()`)
		if replay != http.StatusConflict {
			t.Errorf("submitting again: %d, want 409", replay)
		}
		if !eval[bool](t, admin, noSideEffect) {
			t.Error("markup from a question prompt ran")
		}
	})

	// A durable approval for the two tests below, saved as run_in_background saves it.
	ap, _, err := env.Primary.Internals().Store.SaveApproval(ctx, store.NewApproval{Kind: "command", Channel: "!room:example.org", Thread: "$xsite",
		Author: "@alice:example.org", Agent: "tester", Command: "echo cross-site", Workdir: "/tmp", Ceiling: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	stillPending := func(t *testing.T) {
		t.Helper()
		got, err := env.Primary.Internals().Store.Approval(ctx, ap.ID)
		if err != nil || got.Status != store.ApprovalPending {
			t.Errorf("the approval is %v (%v), want it still pending", got.Status, err)
		}
	}
	decide := env.HTTPURL + "/ui/approvals/" + strconv.FormatInt(ap.ID, 10) + "/decide"

	t.Run("ACrossSiteFormPostIsRefused", func(t *testing.T) {
		// Another origin (another port) whose page posts a form to the dashboard at once.
		attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<!doctype html><form id="f" method="post" action="%s"><input name="decision" value="deny"><input name="csrf" value="guess"></form>`+
				`<script>document.getElementById('f').submit()</script>`, decide)
		}))
		defer attacker.Close()
		step(t, admin, "visit the other site", chromedp.Navigate(attacker.URL))
		waitInPage(t, admin, "the dashboard's answer", `location.href.startsWith('`+env.HTTPURL+`') && document.readyState === 'complete'`)
		if code := eval[int](t, admin, `performance.getEntriesByType('navigation')[0].responseStatus`); code != http.StatusForbidden {
			t.Errorf("the cross-site post was answered %d, want 403", code)
		}
		stillPending(t)
	})

	t.Run("AMemberSeesNoAdminActionAndTheServerRefusesIt", func(t *testing.T) {
		card := "#approval-" + strconv.FormatInt(ap.ID, 10)
		step(t, member, "open the inbox", chromedp.Navigate(env.HTTPURL+"/ui/inbox"), chromedp.WaitVisible(card))
		if n := eval[int](t, member, `document.querySelectorAll('`+card+` button[value="approve"]').length`); n != 0 {
			t.Errorf("a member is offered %d Approve buttons", n)
		}
		if n := eval[int](t, member, `document.querySelectorAll('`+card+` button[value="deny"]').length`); n != 1 {
			t.Errorf("a member is offered %d Deny buttons, want 1", n)
		}
		code := eval[int](t, member, `(async () => {
			const form = new URLSearchParams({csrf: document.querySelector('input[name=csrf]').value, decision: 'approve'});
			return (await fetch('`+decide+`', {method: 'POST', body: form})).status;
		})()`)
		if code != http.StatusForbidden {
			t.Errorf("a member's approve: %d, want 403", code)
		}
		stillPending(t)
	})
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}
