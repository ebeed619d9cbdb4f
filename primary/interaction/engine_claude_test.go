package interaction_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/enginetest"
	"github.com/turncli/turncli/internal/scriptedmodel/messages"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/store"
)

// engineBound bounds the waits of tests that run a real engine CLI: a run takes seconds.
const engineBound = 2 * time.Minute

// engineRig is a primary whose background agents run a real engine CLI against a scripted
// model, with an operator watching.
type engineRig struct {
	env     *testenv.Env
	api     operatorv1.OperatorServiceClient
	watch   operatorWatch
	reports continuationFeed
}

// startEngine starts a primary whose background agents run engine, the CLI found at cli on
// the shells' PATH, with engineEnv for the engine (its model and key).
func startEngine(t testing.TB, engine, cli string, engineEnv ...string) *engineRig {
	t.Helper()
	t.Setenv("PATH", filepath.Dir(cli)+string(os.PathListSeparator)+os.Getenv("PATH"))
	env := start(t, testenv.WithConfig(func(c *primary.Config) {
		c.Interaction.AgentEngine = engine
		c.Interaction.AgentEnv = engineEnv
		c.Shells.EnvAllow = []string{"LANG", "PATH"}
	}))
	addAuthors(t, env)
	api := operatorClient(t, env, firstAdminToken(t, env))
	return &engineRig{env: env, api: api, watch: watchAsOperator(t, api), reports: subscribeContinuations(t, env)}
}

// job reads a job as operators see it.
func (r *engineRig) job(t testing.TB, id int64) *operatorv1.Job {
	t.Helper()
	got, err := r.api.GetJob(context.Background(), &operatorv1.GetJobRequest{JobId: uint64(id)})
	if err != nil {
		t.Fatalf("get job %d: %v", id, err)
	}
	return got.GetJob()
}

// awaitJob polls job id until done says so.
func (r *engineRig) awaitJob(t testing.TB, id int64, what string, done func(*operatorv1.Job) bool) *operatorv1.Job {
	t.Helper()
	deadline := time.Now().Add(engineBound)
	for {
		j := r.job(t, id)
		if done(j) {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d not %s within %v: %v", id, what, engineBound, j)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (r *engineRig) decide(t testing.TB, p *operatorv1.Prompt, d operatorv1.Decision, text string) {
	t.Helper()
	if _, err := r.api.DecidePrompt(context.Background(), &operatorv1.DecidePromptRequest{PromptId: p.GetId(), Decision: d, Text: text}); err != nil {
		t.Fatalf("decide prompt %d: %v", p.GetId(), err)
	}
}

// claudeEnv is what the claude engine needs to reach the scripted model.
func claudeEnv(model *messages.Server, more ...string) []string {
	return append([]string{"ANTHROPIC_BASE_URL=" + model.URL, "ANTHROPIC_API_KEY=scripted-model-key"}, more...)
}

// TestClaudeAgentsWithTheRealCLI runs background agents with the real Claude Code against a
// scripted model: the agent calls a catalog tool through mindroom-agent mcp, asks to run a
// Bash command, the request reaches the operators, and their decision runs or stops it; the
// final message resumes the conversation, and the job records the engine's run.
func TestClaudeAgentsWithTheRealCLI(t *testing.T) {
	cli := enginetest.Claude(t)
	const thread = "$claude"
	const command = `{"command":"echo ran > ran.txt && echo wrote it"}`
	for _, tc := range []struct {
		name     string
		decision operatorv1.Decision
		reason   string
		ran      bool
		result   string
	}{
		{"AnApprovedCommandRuns", operatorv1.Decision_DECISION_ALLOW_ONCE, "", true, "wrote it"},
		{"ADeniedCommandDoesNotRun", operatorv1.Decision_DECISION_DENY, "Not in this repository.", false, "Not in this repository."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := messages.Start(t,
				messages.ToolUse("mcp__mindroom__test__echo", `{"word":"hello"}`),
				messages.ToolUse("Bash", command),
				messages.Text("The report: "+tc.name+"."))
			r := startEngine(t, "claude", cli, claudeEnv(model)...)
			parent := openAs(t, r.env, stranger, thread)
			jobID := startAgent(t, r.env, parent, "echo hello, then write ran.txt", "writer")

			p := r.watch.promptCreated(t, r.api)
			if p.GetKind() != operatorv1.PromptKind_PROMPT_KIND_PERMISSION || p.GetToolName() != "Bash" ||
				p.GetToolUseId() != messages.ToolUseID(1) || p.GetConversation().GetThread() != thread ||
				p.GetRequester() != stranger || p.GetResponseId() == parent || !strings.Contains(p.GetMaskedInputJson(), "ran.txt") {
				t.Fatalf("operators see %v", p)
			}
			r.decide(t, p, tc.decision, tc.reason)

			c := r.reports.awaitWithin(t, jobKey(jobID), engineBound)
			want := "Background agent \"writer\" (job " + itoa(jobID) + ") finished. Its report:\n\nThe report: " + tc.name + "."
			if !c.GetPost() || c.GetText() != want {
				t.Errorf("continuation %q (post %v), want %q", c.GetText(), c.GetPost(), want)
			}
			j := r.awaitJob(t, jobID, "finished", func(j *operatorv1.Job) bool { return j.GetStatus() == operatorv1.JobStatus_JOB_STATUS_FINISHED })
			run := j.GetEngineRun()
			if j.GetOutcome() != "success" || j.GetEngine() != "claude" || run.GetSessionId() == "" || run.GetTurns() < 3 ||
				run.GetCostUsd() <= 0 || run.GetStopReason() != "success" || run.GetIsError() || run.GetRuns() != 1 || j.GetParked() != nil {
				t.Errorf("job %v", j)
			}
			if strings.Contains(j.GetTail(), "turncli-engine-result") || !strings.Contains(j.GetTail(), "> Bash") {
				t.Errorf("tail %q: want the engine's progress without the result line", j.GetTail())
			}
			if echo, ok := model.ToolResult(messages.ToolUseID(0)); !ok || !strings.Contains(echo.Text, "hello") {
				t.Errorf("the catalog tool's result did not reach the model: %+v", echo)
			}
			bash, ok := model.ToolResult(messages.ToolUseID(1))
			if !ok || !strings.Contains(bash.Text, tc.result) {
				t.Errorf("the model got %+v for the command, want %q in it", bash, tc.result)
			}
			_, err := os.Stat(filepath.Join(workspaceOf(t, r.env, jobID), "ran.txt"))
			if ran := err == nil; ran != tc.ran {
				t.Errorf("the command ran: %v, want %v", ran, tc.ran)
			}
		})
	}
}

// TestAClaudeAgentParksOnALongWaitAndResumesOnTheDecision: nobody decides within the hook's
// wait, so the engine's process ends and the job parks, keeping its prompt open; the decision
// resumes the same session in the same job, which then runs the command and reports.
func TestAClaudeAgentParksOnALongWaitAndResumesOnTheDecision(t *testing.T) {
	cli := enginetest.Claude(t)
	model := messages.Start(t, messages.ToolUse("Bash", `{"command":"echo ran > ran.txt && echo wrote it"}`), messages.Text("Done after the wait."))
	r := startEngine(t, "claude", cli, claudeEnv(model, "MINDROOM_AGENT_HOOK_WAIT=1s")...)
	parent := openAs(t, r.env, stranger, "$parked")
	jobID := startAgent(t, r.env, parent, "write ran.txt", "parker")

	p := r.watch.promptCreated(t, r.api)
	parked := r.awaitJob(t, jobID, "parked", func(j *operatorv1.Job) bool { return j.GetParked() != nil })
	if parked.GetStatus() != operatorv1.JobStatus_JOB_STATUS_RUNNING || parked.GetParked().GetPromptId() != p.GetId() ||
		parked.GetParked().GetTool() != "Bash" || parked.GetEngineRun().GetStopReason() != "tool_deferred" {
		t.Fatalf("parked job %v", parked)
	}
	rec, err := r.env.Primary.Internals().Store.Job(context.Background(), jobID)
	if err != nil || rec.Pid != 0 {
		t.Fatalf("a parked job keeps no process: %+v, %v", rec, err)
	}
	// The engine's process has ended, and its response with it: the prompt stays open.
	if got, err := r.api.GetPrompt(context.Background(), &operatorv1.GetPromptRequest{PromptId: p.GetId()}); err != nil ||
		got.GetPrompt().GetStatus() != operatorv1.PromptStatus_PROMPT_STATUS_PENDING {
		t.Fatalf("prompt of a parked job: %v, %v", got.GetPrompt(), err)
	}
	// The thread feed carries the request and the job's parking to the conversation's thread.
	events, err := r.env.Primary.Internals().Store.ListThreadEvents(context.Background(),
		store.ThreadEventFilter{Channel: channel, Thread: "$parked", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var promptOpened, jobUpdated bool
	for _, e := range events {
		promptOpened = promptOpened || e.Kind == store.ThreadPrompt && e.Key == itoa(int64(p.GetId())) && e.Change == store.ThreadOpened
		jobUpdated = jobUpdated || e.Kind == store.ThreadJob && e.Key == itoa(jobID) && e.Change == store.ThreadUpdated
	}
	if !promptOpened || !jobUpdated {
		t.Errorf("thread feed %+v: want the prompt opened and the job updated", events)
	}
	r.decide(t, p, operatorv1.Decision_DECISION_ALLOW_ONCE, "")

	c := r.reports.awaitWithin(t, jobKey(jobID), engineBound)
	if !strings.HasSuffix(c.GetText(), "Its report:\n\nDone after the wait.") {
		t.Errorf("continuation %q", c.GetText())
	}
	j := r.awaitJob(t, jobID, "finished", func(j *operatorv1.Job) bool { return j.GetStatus() == operatorv1.JobStatus_JOB_STATUS_FINISHED })
	if j.GetOutcome() != "success" || j.GetEngineRun().GetRuns() != 2 || j.GetEngineRun().GetSessionId() != parked.GetEngineRun().GetSessionId() {
		t.Errorf("job %v", j)
	}
	if _, err := os.Stat(filepath.Join(workspaceOf(t, r.env, jobID), "ran.txt")); err != nil {
		t.Errorf("the allowed command did not run after the resume: %v", err)
	}
	if bash, ok := model.ToolResult(messages.ToolUseID(0)); !ok || !strings.Contains(bash.Text, "wrote it") {
		t.Errorf("the model got %+v for the command", bash)
	}
}

// workspaceOf is the working directory of job id.
func workspaceOf(t testing.TB, env *testenv.Env, id int64) string {
	t.Helper()
	j, err := env.Primary.Internals().Store.Job(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j.Workspace
}
