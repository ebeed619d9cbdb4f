package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/operators"
	"github.com/turncli/turncli/primary/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// rig is a real primary serving gRPC on loopback, and a state directory whose endpoints.json
// points the CLI at it with the first admin's credential.
type rig struct {
	env      *testenv.Env
	stateDir string
}

func newRig(t *testing.T) *rig {
	t.Helper()
	env := testenv.Start(t, testenv.WithGRPCOnLoopback())
	dir := t.TempDir()
	ep, _ := json.Marshal(map[string]string{"grpc": env.GRPCAddr, "operator_token_file": filepath.Join(env.StateDir, "credentials", "operator-admin.token")})
	if err := os.WriteFile(filepath.Join(dir, "endpoints.json"), ep, 0o600); err != nil {
		t.Fatal(err)
	}
	return &rig{env: env, stateDir: dir}
}

// result is one run of the CLI.
type result struct {
	code           int
	stdout, stderr string
}

// cli runs the command line against the rig's primary.
func (r *rig) cli(t *testing.T, args ...string) result {
	t.Helper()
	return r.cliIn(t, "", args...)
}

func (r *rig) cliIn(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errOut strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code := run(ctx, append(args, "--state-dir", r.stateDir), strings.NewReader(stdin), &out, &errOut)
	return result{code, out.String(), errOut.String()}
}

// ok runs the CLI and fails the test unless it exits 0.
func (r *rig) ok(t *testing.T, args ...string) string {
	t.Helper()
	res := r.cli(t, args...)
	if res.code != 0 {
		t.Fatalf("turncli %s: exit %d: %s", strings.Join(args, " "), res.code, res.stderr)
	}
	return res.stdout
}

// jsonLines decodes the --json output of a list, one object per line.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var list []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not JSON: %q: %v", sc.Text(), err)
		}
		list = append(list, m)
	}
	return list
}

// pendingID polls `NOUN ls --status S --json` until one record is listed, and returns its id.
func (r *rig) pendingID(t *testing.T, noun, status string) string {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if list := jsonLines(t, r.ok(t, noun, "ls", "--status", status, "--json")); len(list) == 1 {
			return fmt.Sprint(list[0]["id"])
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s %s within 20 s", status, noun)
		}
	}
}

const (
	channel = "!room:example.org"
	thread  = "$thread"
)

func TestTheCLIOnARealPrimary(t *testing.T) {
	r := newRig(t)
	env := r.env
	resp := env.Open(t)

	t.Run("WhoAmINamesTheAdminAsATableAndAsJSON", func(t *testing.T) {
		if out := r.ok(t, "whoami"); !regexp.MustCompile(`name:\s+admin`).MatchString(out) || !regexp.MustCompile(`role:\s+admin`).MatchString(out) {
			t.Fatalf("whoami: %q", out)
		}
		if got := jsonLines(t, r.ok(t, "--json", "whoami")); len(got) != 1 || got[0]["role"] != "ROLE_ADMIN" {
			t.Fatalf("whoami --json: %v", got)
		}
	})

	t.Run("ARefusedCredentialExitsOneAndNeverPrintsIt", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "bad.token")
		os.WriteFile(bad, []byte("not-a-credential-xyz\n"), 0o600)
		res := r.cli(t, "whoami", "--token-file", bad)
		if res.code != 1 || !strings.Contains(res.stderr, "refused the operator credential") || strings.Contains(res.stderr+res.stdout, "not-a-credential-xyz") {
			t.Fatalf("exit %d, stderr %q", res.code, res.stderr)
		}
	})

	t.Run("UsageMistakesExitTwo", func(t *testing.T) {
		for _, args := range [][]string{{"nonsense"}, {"approvals", "show"}, {"approvals", "show", "abc"}, {"jobs", "ls", "--status", "paused"},
			{"approvals", "comment", "1"}, {"prompts", "allow", "1", "--scope", "forever"}, {"modes", "get"}, {"jobs", "ls", "--thread", "t"}} {
			if res := r.cli(t, args...); res.code != 2 || res.stderr == "" {
				t.Errorf("turncli %v: exit %d, stderr %q", args, res.code, res.stderr)
			}
		}
		// The mistake is said once, in the command's name, before the command's usage.
		for _, tc := range []struct {
			args  []string
			first string
		}{
			{[]string{"approvals", "show", "abc"}, `turncli approvals show: approval id must be a positive number, not "abc"`},
			{[]string{"approvals", "comment", "1"}, `turncli approvals comment: a comment needs -m TEXT`},
			{[]string{"modes", "set", "often", "--channel", channel}, `turncli modes set: MODE must be one of admin, ask, auto`},
			{[]string{"shell", "set", "full", "--agent", "a", "--channel", channel}, `turncli shell set: MODE must be one of minimal, standard`},
			{[]string{"prompts", "allow", "1", "--scope", "forever"}, `turncli prompts allow: invalid value "forever" for flag -scope: must be one of conversation, once, thread`},
			{[]string{"whoami", "extra"}, `turncli whoami: whoami takes no arguments`},
		} {
			res := r.cli(t, tc.args...)
			first, usage, _ := strings.Cut(res.stderr, "\n")
			if res.code != 2 || first != tc.first || !strings.HasPrefix(usage, "usage: turncli ") {
				t.Errorf("turncli %v: exit %d, stderr %q; want first line %q", tc.args, res.code, res.stderr, tc.first)
			}
		}
		if res := r.cli(t); res.code != 2 {
			t.Errorf("no command: exit %d", res.code)
		}
		if res := r.cli(t, "jobs", "logs", "-h"); res.code != 0 || !strings.Contains(res.stdout, "usage: turncli jobs logs ID") {
			t.Errorf("help: exit %d, %q", res.code, res.stdout)
		}
	})

	t.Run("WorkersAndResponsesAreListed", func(t *testing.T) {
		env.StartWorker(t, "key-a", "wk-cli")
		if out := r.ok(t, "workers", "ls"); !strings.Contains(out, "wk-cli") || !strings.Contains(out, "key-a") {
			t.Fatalf("workers ls: %q", out)
		}
		if got := jsonLines(t, r.ok(t, "workers", "ls", "--key", "key-b", "--json")); len(got) != 0 {
			t.Fatalf("key-b has workers: %v", got)
		}
		if out := r.ok(t, "responses", "ls"); !strings.Contains(out, resp) {
			t.Fatalf("responses ls lacks %s: %q", resp, out)
		}
	})

	t.Run("ARequestApprovalPromptIsShownAndApproved", func(t *testing.T) {
		done := make(chan testenv.BashRun, 1)
		go func() {
			done <- env.RunBash(t, resp, "cli-prompt", `mindroom-agent tools call --timeout 0 --call-id 3f0c3c1e-7a5b-4c2d-9e0f-1a2b3c4d5e6f interaction.request_approval '{"details":"ship <b>v2</b>"}' >/dev/null
mindroom-agent calls wait --timeout 60 3f0c3c1e-7a5b-4c2d-9e0f-1a2b3c4d5e6f; echo "wait=$?"`)
		}()
		id := r.pendingID(t, "prompts", "pending")
		if out := r.ok(t, "prompts", "show", id); !strings.Contains(out, "ship <b>v2</b>") {
			t.Fatalf("prompts show: %q", out)
		}
		// The primary names the decisions it takes in the API's terms; the CLI says them as typed.
		res := r.cli(t, "prompts", "allow", id, "--scope", "thread")
		if want := "turncli prompts allow: an approval request takes approve, deny or comment, not allow --scope thread (InvalidArgument)\n"; res.code != 1 || res.stderr != want {
			t.Fatalf("allow of an approval request: exit %d, stderr %q, want %q", res.code, res.stderr, want)
		}
		if out := r.ok(t, "prompts", "approve", id); !regexp.MustCompile(`status:\s+approved`).MatchString(out) {
			t.Fatalf("prompts approve: %q", out)
		}
		if run := <-done; !strings.Contains(run.Stdout, "wait=0") {
			t.Fatalf("the waiting command: %q %q", run.Stdout, run.Stderr)
		}
		if res := r.cli(t, "prompts", "approve", id); res.code != 1 {
			t.Fatalf("a second decision: exit %d", res.code)
		}
	})

	t.Run("APermissionPromptAllowedForTheConversationIsAnAllowanceUntilRevoked", func(t *testing.T) {
		go env.RunBash(t, resp, "cli-permission", `mindroom-agent tools call --timeout 0 interaction.permission_prompt '{"tool_name":"Bash","input":{"command":"ls"}}'`)
		id := r.pendingID(t, "prompts", "pending")
		res := r.cli(t, "prompts", "approve", id)
		if want := "turncli prompts approve: a permission prompt takes allow --scope once, allow --scope thread, allow --scope conversation or deny, not approve (InvalidArgument)\n"; res.code != 1 || res.stderr != want {
			t.Fatalf("approve of a permission prompt: exit %d, stderr %q, want %q", res.code, res.stderr, want)
		}
		if out := r.ok(t, "prompts", "allow", id, "--scope", "conversation"); !regexp.MustCompile(`decision:\s+allow --scope conversation\n`).MatchString(out) {
			t.Fatalf("prompts allow: %q", out)
		}
		if out := r.ok(t, "allowances", "ls"); !strings.Contains(out, "Bash") || !strings.Contains(out, "conversation") {
			t.Fatalf("allowances ls: %q", out)
		}
		r.ok(t, "allowances", "revoke", "Bash", "--channel", channel, "--thread", thread, "--scope", "conversation")
		if got := jsonLines(t, r.ok(t, "allowances", "ls", "--json")); len(got) != 0 {
			t.Fatalf("still allowed: %v", got)
		}
	})

	var jobID string
	t.Run("ADurableApprovalIsCommentedApprovedAndItsJobsLogFollowed", func(t *testing.T) {
		r.ok(t, "modes", "set", "auto", "--channel", channel, "--thread", thread)
		if out := r.ok(t, "modes", "get", "--channel", channel, "--thread", thread); !regexp.MustCompile(`mode:\s+auto`).MatchString(out) {
			t.Fatalf("modes get: %q", out)
		}
		if out := r.ok(t, "conversations", "ls"); !regexp.MustCompile(regexp.QuoteMeta(channel+" / "+thread) + `\s+auto\s`).MatchString(out) {
			t.Fatalf("conversations ls does not show the conversation in auto: %q", out)
		}
		env.RunBash(t, resp, "cli-job", `mindroom-agent tools call interaction.run_in_background '{"command":"echo first; sleep 1; printf \"\\033[31mred\\033[0m\\n\"; echo last"}'`)
		id := r.pendingID(t, "approvals", "pending")
		r.ok(t, "approvals", "comment", id, "-m", "looks fine")
		if out := r.ok(t, "approvals", "show", id); !strings.Contains(out, "looks fine") || !strings.Contains(out, "echo first") {
			t.Fatalf("approvals show: %q", out)
		}
		approved := jsonLines(t, r.ok(t, "approvals", "approve", id, "--json"))
		jobID = fmt.Sprint(approved[0]["job_id"])
		if jobID == "" || jobID == "<nil>" {
			t.Fatalf("approved without a job: %v", approved)
		}
		// -f follows until the job ends: everything it printed, escapes unchanged off a terminal.
		if out := r.ok(t, "jobs", "logs", jobID, "-f"); out != "first\n\x1b[31mred\x1b[0m\nlast\n" {
			t.Fatalf("jobs logs -f: %q", out)
		}
		if out := r.ok(t, "jobs", "show", jobID); !regexp.MustCompile(`status:\s+finished`).MatchString(out) || !strings.HasSuffix(out, "\ntail:\n  first\n  red\n  last\n") {
			t.Fatalf("jobs show: %q", out)
		}
		if out := r.ok(t, "jobs", "ls", "--status", "finished"); !strings.Contains(out, jobID) {
			t.Fatalf("jobs ls: %q", out)
		}
		if out := r.ok(t, "audit", "ls", "--subject", "approval/"+id); !strings.Contains(out, "admin") {
			t.Fatalf("audit ls: %q", out)
		}
	})

	t.Run("ASingularNounOrANounAloneListsLikeLs", func(t *testing.T) {
		want := r.ok(t, "jobs", "ls")
		if !strings.Contains(want, jobID) {
			t.Fatalf("jobs ls lacks job %s: %q", jobID, want)
		}
		for _, args := range [][]string{{"jobs"}, {"job"}, {"job", "ls"}, {"job", "list"}} {
			if out := r.ok(t, args...); out != want {
				t.Errorf("turncli %s:\n%s\nwant:\n%s", strings.Join(args, " "), out, want)
			}
		}
		if got := jsonLines(t, r.ok(t, "job", "--status", "finished", "--json")); len(got) == 0 || fmt.Sprint(got[0]["id"]) != jobID {
			t.Errorf("job --status finished --json: %v", got)
		}
	})

	t.Run("AnotherApprovalIsDenied", func(t *testing.T) {
		resp := env.Open(t) // run_in_background ended the last one's turn
		env.RunBash(t, resp, "cli-job-2", `mindroom-agent tools call interaction.run_in_background '{"command":"true"}'`)
		id := r.pendingID(t, "approvals", "pending")
		if out := r.ok(t, "approvals", "deny", id, "-m", "not now"); !regexp.MustCompile(`status:\s+denied`).MatchString(out) {
			t.Fatalf("approvals deny: %q", out)
		}
	})

	t.Run("ARunningJobIsCancelled", func(t *testing.T) {
		n, err := env.Primary.Internals().Jobs.Start(context.Background(), jobs.JobSpec{Kind: "command", Command: "sleep 60", Channel: channel, Thread: thread, Agent: "tester", Workspace: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		r.ok(t, "jobs", "cancel", fmt.Sprint(n))
		out := r.ok(t, "jobs", "logs", fmt.Sprint(n), "-f") // returns once the job has ended
		if j, _ := env.Primary.Internals().Jobs.Get(context.Background(), n); j.Status != store.JobFinished || j.Outcome != jobs.OutcomeCancelled {
			t.Fatalf("job after cancel: %+v (log %q)", j, out)
		}
	})

	// run_in_background ended the first one's turn; questions and progress need a requester the
	// runtime trusts and the progress capability.
	resp = env.Open(t, func(r *responsev1.OpenResponseRequest) { r.Flags = []string{"requester_trusted", "progress_report"} })
	t.Run("AQuestionFormIsDraftedThenSubmittedOnce", func(t *testing.T) {
		go env.RunBash(t, resp, "cli-ask", `mindroom-agent tools call --timeout 0 interaction.ask_questions '{"title":"Deploy?","questions":[{"id":"go","prompt":"Ship it?","type":"single","options":[{"label":"Yes","value":"yes"},{"label":"No","value":"no"}]}]}'`)
		id := r.pendingID(t, "questions", "pending")
		// Only the person asked may answer: an operator of that name.
		alice := operatorFile(t, env, "@alice:example.org", store.RoleMember)
		if res := r.cli(t, "questions", "draft", id, "--answers", `{"go":{"values":["no"]}}`); res.code != 1 || !strings.Contains(res.stderr, "PermissionDenied") {
			t.Fatalf("the admin drafts for alice: exit %d %q", res.code, res.stderr)
		}
		r.ok(t, "questions", "draft", id, "--answers", `{"go":{"values":["no"]}}`, "--token-file", alice)
		if out := r.ok(t, "questions", "show", id); !strings.Contains(out, `"no"`) {
			t.Fatalf("questions show after the draft: %q", out)
		}
		if res := r.cliIn(t, `{"go":{"values":["yes"]}}`, "questions", "submit", id, "--answers", "-", "--token-file", alice); res.code != 0 || !regexp.MustCompile(`status:\s+submitted`).MatchString(res.stdout) {
			t.Fatalf("submit: exit %d %q %q", res.code, res.stdout, res.stderr)
		}
		if res := r.cli(t, "questions", "submit", id, "--answers", `{"go":{"values":["no"]}}`, "--token-file", alice); res.code != 1 {
			t.Fatalf("a second submit: exit %d", res.code)
		}
	})

	t.Run("AFormIsCancelled", func(t *testing.T) {
		go env.RunBash(t, resp, "cli-ask-2", `mindroom-agent tools call --timeout 0 interaction.ask_questions '{"title":"Later?","questions":[{"id":"q","prompt":"Why?","type":"text"}]}'`)
		id := r.pendingID(t, "questions", "pending")
		if out := r.ok(t, "questions", "cancel", id); !regexp.MustCompile(`status:\s+cancelled`).MatchString(out) {
			t.Fatalf("questions cancel: %q", out)
		}
	})

	t.Run("ACallNeedingConfirmationIsShownAndDenied", func(t *testing.T) {
		go env.RunBash(t, resp, "cli-confirm", `mindroom-agent tools call --timeout 0 test.confirm_echo '{"x":1}'`)
		id := r.pendingID(t, "call-approvals", "waiting")
		if out := r.ok(t, "call-approvals", "show", id); !strings.Contains(out, "test.confirm_echo") {
			t.Fatalf("call-approvals show: %q", out)
		}
		if out := r.ok(t, "call-approvals", "deny", id, "-m", "no"); !regexp.MustCompile(`status:\s+denied`).MatchString(out) {
			t.Fatalf("call-approvals deny: %q", out)
		}
	})

	t.Run("ProgressIsListed", func(t *testing.T) {
		env.RunBash(t, resp, "cli-progress", `mindroom-agent tools call interaction.report_progress '{"title":"Migrating","steps":[`+
			`{"id":"copy","title":"Copy the rows","status":"complete","output":"3 tables\nno errors"},`+
			`{"id":"b","title":"Rebuild 索引","status":"in_progress","details":"\u001b[2Jslow","sources":[{"url":"https://example.org/x","text":"the plan"}]},`+
			`{"id":"c","title":"Verify","status":"pending"}]}'`)
		list := jsonLines(t, r.ok(t, "progress", "ls", "--response", resp, "--json"))
		if len(list) != 1 || !strings.Contains(fmt.Sprint(list[0]["steps_json"]), `"status":"in_progress"`) {
			t.Fatalf("progress ls --json keeps the steps as JSON text: %v", list)
		}
		updated, err := time.Parse(time.RFC3339Nano, fmt.Sprint(list[0]["updated_at"]))
		if err != nil {
			t.Fatal(err)
		}
		want := "Migrating\n" +
			"  response:      " + resp + "\n" +
			"  agent:         " + fmt.Sprint(list[0]["agent"]) + "\n" +
			"  conversation:  " + channel + " / " + thread + "\n" +
			"  requester:     " + fmt.Sprint(list[0]["requester"]) + "\n" +
			"  updated:       " + updated.Local().Format(time.DateTime) + "\n" +
			"  steps:\n" +
			"    complete     copy  Copy the rows\n" +
			"                       output: 3 tables\n" +
			"                               no errors\n" +
			"    in_progress  b     Rebuild 索引\n" +
			"                       details: \\x1b[2Jslow\n" +
			"                       source: the plan <https://example.org/x>\n" +
			"    pending      c     Verify\n"
		if out := r.ok(t, "progress", "ls", "--response", resp); out != want {
			t.Fatalf("progress ls:\n%s\nwant:\n%s", out, want)
		}
	})

	t.Run("ShellModesAreSetReadAndReset", func(t *testing.T) {
		r.ok(t, "shell", "set", "standard", "--agent", "tester", "--channel", channel)
		if out := r.ok(t, "shell", "get", "--agent", "tester", "--channel", channel); !regexp.MustCompile(`shell mode:\s+standard\napplies on:\s+the primary\n`).MatchString(out) {
			t.Fatalf("shell get: %q", out)
		}
		r.ok(t, "shell", "reset", "--agent", "tester", "--channel", channel)
		if out := r.ok(t, "shell", "get", "--agent", "tester", "--channel", channel); out != "shell mode:  standard\n" {
			t.Fatalf("shell get after reset: %q, want the default alone", out)
		}
	})

	t.Run("EventsFollowUntilInterrupted", func(t *testing.T) {
		pr, pw := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		code := make(chan int, 1)
		go func() {
			code <- run(ctx, []string{"events", "--json", "--state-dir", r.stateDir}, strings.NewReader(""), pw, io.Discard)
			pw.Close()
		}()
		lines := bufio.NewScanner(pr)
		// The watch may not be in place yet: make changes until one is seen.
		seen := make(chan map[string]any, 1)
		go func() {
			for lines.Scan() {
				var ev map[string]any
				if json.Unmarshal(lines.Bytes(), &ev) == nil {
					select {
					case seen <- ev:
					default:
					}
				}
			}
		}()
		var ev map[string]any
		for deadline := time.Now().Add(20 * time.Second); ev == nil; {
			env.RunBash(t, resp, fmt.Sprintf("cli-event-%d", time.Now().UnixNano()), `mindroom-agent tools call interaction.report_progress '{"title":"Tick","steps":[{"id":"a","title":"x","status":"complete"}]}' >/dev/null`)
			select {
			case ev = <-seen:
			case <-time.After(200 * time.Millisecond):
				if time.Now().After(deadline) {
					t.Fatal("no event within 20 s")
				}
			}
		}
		if ev["kind"] == nil || ev["at"] == nil {
			t.Errorf("event %v", ev)
		}
		cancel()
		if c := <-code; c != 0 {
			t.Fatalf("events after an interrupt: exit %d", c)
		}
	})

	t.Run("TheEventFeedIsAlignedUnderItsHeader", func(t *testing.T) {
		pr, pw := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		code := make(chan int, 1)
		go func() {
			code <- run(ctx, []string{"events", "--state-dir", r.stateDir}, strings.NewReader(""), pw, io.Discard)
			pw.Close()
		}()
		lines := make(chan string, 100)
		go func() {
			sc := bufio.NewScanner(pr)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		// The header comes with the first event; the watch may not be in place yet: make changes
		// until one is seen.
		var got []string
		for deadline := time.Now().Add(20 * time.Second); len(got) < 2; {
			env.RunBash(t, resp, fmt.Sprintf("cli-feed-%d", time.Now().UnixNano()), `mindroom-agent tools call interaction.report_progress '{"title":"Feed","steps":[{"id":"a","title":"x","status":"complete"}]}' >/dev/null`)
			for wait := time.After(200 * time.Millisecond); len(got) < 2; {
				select {
				case l := <-lines:
					got = append(got, l)
					continue
				case <-wait:
				}
				break
			}
			if len(got) < 2 && time.Now().After(deadline) {
				t.Fatal("no event within 20 s")
			}
		}
		header, row := got[0], got[1]
		cancel()
		go func() {
			for range lines { // drain what else came, so the command can end
			}
		}()
		if c := <-code; c != 0 {
			t.Fatalf("events: exit %d", c)
		}
		// Every column starts where its header does: the subject is a response's, the widest.
		for _, col := range []struct{ head, cell string }{{"KIND", "progress.updated"}, {"SUBJECT", "response/" + resp}, {"DATA", "{"}} {
			if h, c := strings.Index(header, col.head), strings.Index(row, col.cell); h < 0 || h != c {
				t.Errorf("%s at %d, its cell %q at %d:\n%s\n%s", col.head, h, col.cell, c, header, row)
			}
		}
	})

	t.Run("AWideLabelKeepsTheJobTableAligned", func(t *testing.T) {
		n, err := env.Primary.Internals().Jobs.Start(context.Background(), jobs.JobSpec{Kind: "command", Command: "true", Label: "部署 🎉 ünï", Channel: channel, Thread: thread, Agent: "代理", Workspace: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		out := r.ok(t, "jobs", "ls")
		lines := strings.Split(out, "\n")
		for _, l := range lines {
			if !strings.HasPrefix(l, fmt.Sprint(n)+" ") {
				continue
			}
			for _, col := range []struct{ head, cell string }{{"AGENT", "代理"}, {"LABEL OR COMMAND", "部署 🎉 ünï"}} {
				if h, c := textWidth(lines[0][:strings.Index(lines[0], col.head)]), textWidth(l[:strings.Index(l, col.cell)]); h != c {
					t.Errorf("%s at column %d, %q at %d:\n%s", col.head, h, col.cell, c, out)
				}
			}
			return
		}
		t.Fatalf("job %d is not listed:\n%s", n, out)
	})

	t.Run("AMemberIsRefusedAnAdminsDecision", func(t *testing.T) {
		file := operatorFile(t, env, "mia", store.RoleMember)
		resp := env.Open(t)
		env.RunBash(t, resp, "cli-job-3", `mindroom-agent tools call interaction.run_in_background '{"command":"true"}'`)
		id := r.pendingID(t, "approvals", "pending")
		res := r.cli(t, "approvals", "approve", id, "--token-file", file)
		if res.code != 1 || !strings.Contains(res.stderr, "PermissionDenied") {
			t.Fatalf("member approves: exit %d, %q", res.code, res.stderr)
		}
		if out := r.ok(t, "approvals", "show", id); !regexp.MustCompile(`status:\s+pending`).MatchString(out) {
			t.Fatalf("after the refusal: %q", out)
		}
	})
}

// operatorFile adds an operator and returns a file holding its credential.
func operatorFile(t *testing.T, env *testenv.Env, name string, role store.OperatorRole) string {
	t.Helper()
	token, err := operators.Add(context.Background(), env.Primary.Internals().Store, name, role)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "operator.token")
	if err := os.WriteFile(file, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}
