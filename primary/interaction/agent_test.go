package interaction_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/store"
)

// withTestEngine configures the deterministic "test" engine for background agents.
func withTestEngine() testenv.Option {
	return testenv.WithConfig(func(c *primary.Config) { c.Interaction.AgentEngine = "test" })
}

// startAgent calls run_agent_in_background with the task and returns the job id.
func startAgent(t testing.TB, env *testenv.Env, responseID, task, label string) int64 {
	t.Helper()
	return startedJob(t, callTool(t, env, responseID, "interaction.run_agent_in_background",
		jsonArgs(t, map[string]any{"task": task, "label": label})))
}

// receiptLines returns the receipts a report holds (the lines the engine's CLI calls printed).
func receiptLines(t testing.TB, report string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(report, "\n") {
		if !strings.HasPrefix(line, `{"attachments"`) {
			continue
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("receipt line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// TestBackgroundAgents runs background agents with the deterministic test engine: a real
// Bash job of a fresh response whose tool calls go through the real CLI.
func TestBackgroundAgents(t *testing.T) {
	env := start(t, withTestEngine())
	addAuthors(t, env)

	t.Run("ItsReportIsPostedWithItsToolResults", func(t *testing.T) {
		const thread = "$agent-report"
		parent := openAs(t, env, stranger, thread) // ask mode: background agents need no mode
		jobID := startAgent(t, env, parent, "say hello\ncall test.echo {\"x\":1}\ncall test.identity {}", "reporter")
		c := waitContinuation(t, env, jobKey(jobID))
		if !c.Post || c.Channel != channel || c.Thread != thread {
			t.Errorf("report continuation goes to %s %s post=%v, want a post to %s %s", c.Channel, c.Thread, c.Post, channel, thread)
		}
		if !strings.HasPrefix(c.Text, `Background agent "reporter" (job `+itoa(jobID)+`) finished. Its report:`) ||
			!strings.Contains(c.Text, "\nhello\n") {
			t.Errorf("report = %q", c.Text)
		}
		rs := receiptLines(t, c.Text)
		if len(rs) != 2 {
			t.Fatalf("report holds %d receipts, want the echo and identity calls:\n%s", len(rs), c.Text)
		}
		echo, ident := rs[0], rs[1]
		if echo["function"] != "echo" || echo["status"] != "completed" || !jsonEqual(echo["outcome"], map[string]any{"x": 1.0}) {
			t.Errorf("echo receipt = %v", echo)
		}
		// The call ran in the agent's own response, in the window of its one Bash command,
		// for the same author and conversation.
		who, _ := ident["outcome"].(map[string]any)
		if ident["parent_bash_call_id"] != "background-agent" || who["bash_call_id"] != "background-agent" ||
			who["response_id"] == parent || who["response_id"] == "" || who["requester"] != stranger ||
			who["channel"] != channel || who["thread"] != thread || who["agent"] != agent {
			t.Errorf("identity receipt = %v (parent response %s)", ident, parent)
		}
		j := waitJob(t, env, jobID)
		if j.Kind != "agent" || j.Author != stranger || j.Outcome != "success" || j.Label != "reporter" {
			t.Errorf("agent job = %+v", j.Job)
		}
		// Its response closes when the job ends.
		bg, _ := who["response_id"].(string)
		deadline := time.Now().Add(waitBound)
		for {
			if _, open := env.Primary.Internals().Responses.Get(bg); !open {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the agent's response %s is still open after its job ended", bg)
			}
			time.Sleep(pollEvery)
		}
	})

	t.Run("AFailureAsksToPresentTheOutcomePlainly", func(t *testing.T) {
		parent := openAs(t, env, stranger, "$agent-fail")
		jobID := startAgent(t, env, parent, "say partial work\nfail 3\nsay never", "failing")
		c := waitContinuation(t, env, jobKey(jobID))
		if c.Post {
			t.Error("a failed agent's outcome is posted as a report; want a model turn")
		}
		for _, want := range []string{`"failing" (job ` + itoa(jobID) + `) did not finish`, "failed (exit 3)",
			"partial work", "Tell the user plainly", "do not re-launch"} {
			if !strings.Contains(c.Text, want) {
				t.Errorf("continuation does not contain %q:\n%s", want, c.Text)
			}
		}
		if strings.Contains(c.Text, "never") {
			t.Errorf("the engine went on after fail:\n%s", c.Text)
		}
	})

	t.Run("ItWorksInEveryMode", func(t *testing.T) {
		for _, mode := range []store.Mode{store.ModeAsk, store.ModeAuto, store.ModeAdmin} {
			t.Run(string(mode), func(t *testing.T) {
				thread := "$agent-mode-" + string(mode)
				setMode(t, env, thread, mode)
				parent := openAs(t, env, memberAuthor, thread)
				jobID := startAgent(t, env, parent, "say in "+string(mode), "")
				c := waitContinuation(t, env, jobKey(jobID))
				if !c.Post || !strings.Contains(c.Text, "\nin "+string(mode)) {
					t.Errorf("continuation = %+v", c)
				}
			})
		}
	})

	t.Run("AnAdminsAgentInAnAdminConversationGetsAnApproval", func(t *testing.T) {
		const thread = "$agent-admin"
		setMode(t, env, thread, store.ModeAdmin)
		parent := openAs(t, env, adminAuthor, thread)
		jobID := startAgent(t, env, parent, `call interaction.run_in_background {"command":"echo from-agent"}`, "delegator")
		c := waitContinuation(t, env, jobKey(jobID))
		rs := receiptLines(t, c.Text)
		if len(rs) != 1 {
			t.Fatalf("report holds %d receipts, want 1:\n%s", len(rs), c.Text)
		}
		out, _ := rs[0]["outcome"].(map[string]any)
		if rs[0]["status"] != "completed" || out["status"] != "pending_approval" {
			t.Errorf("the agent's run_in_background = %v, want a pending approval", rs[0])
		}
		list := approvalsIn(t, env, thread)
		if len(list) != 1 || list[0].Command != "echo from-agent" || list[0].Author != adminAuthor || list[0].Status != store.ApprovalPending {
			t.Errorf("approvals of the conversation = %+v, want one pending for ada's command", list)
		}
		for _, j := range jobsIn(t, env, thread) {
			if j.Kind == "command" {
				t.Errorf("the agent's command started directly as job %d", j.ID)
			}
		}
	})

	t.Run("InvalidTasksAreRefused", func(t *testing.T) {
		const thread = "$agent-invalid"
		parent := openAs(t, env, stranger, thread)
		call := func(args string) callResult {
			return callTool(t, env, parent, "interaction.run_agent_in_background", args)
		}
		refused(t, call(`{"task":"  \n "}`), "task is empty")
		refused(t, call(`{"task":"say x","label":"`+strings.Repeat("l", 121)+`"}`), "label is 121 characters")
		refused(t, call(`{"task":7}`), "Invalid tool arguments")
		refused(t, call(`{"brief":"say x"}`), "Invalid tool arguments")
		if n := len(jobsIn(t, env, thread)); n != 0 {
			t.Errorf("refused tasks started %d jobs", n)
		}
	})
}

// TestBackgroundAgentsWithoutAnEngine checks the refusal when no engine is configured.
func TestBackgroundAgentsWithoutAnEngine(t *testing.T) {
	env := start(t)
	const thread = "$no-engine"
	parent := openAs(t, env, stranger, thread)
	refused(t, callTool(t, env, parent, "interaction.run_agent_in_background", `{"task":"say hello"}`),
		"no background agent engine is configured")
	if n := len(jobsIn(t, env, thread)); n != 0 {
		t.Errorf("%d jobs started without an engine", n)
	}
}

// jsonEqual compares two decoded JSON values.
func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// TestBackgroundAgentBriefAndRedaction runs an engine of one's own that prints its grant and
// its brief: the brief frames the task for an agent working alone, and the report posted to
// the conversation holds a marker instead of the grant.
func TestBackgroundAgentBriefAndRedaction(t *testing.T) {
	env := start(t, testenv.WithConfig(func(c *primary.Config) {
		c.Interaction.AgentEngine = `command:printf 'grant=%s\n' "$MINDROOM_AGENT_CLI_TOKEN"; printf '%s\n' "$MINDROOM_AGENT_TASK"`
	}))
	parent := openAs(t, env, stranger, "$brief")
	jobID := startAgent(t, env, parent, "  count the files  ", "")
	c := waitContinuation(t, env, jobKey(jobID))
	if !c.Post {
		t.Errorf("continuation is not a post: %+v", c)
	}
	for _, want := range []string{"grant=(redacted)\n", "working alone", "final message is your report", "Task:\ncount the files"} {
		if !strings.Contains(c.Text, want) {
			t.Errorf("report does not contain %q:\n%s", want, c.Text)
		}
	}
}
