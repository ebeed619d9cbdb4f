package interaction_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/enginetest"
	"github.com/turncli/turncli/internal/scriptedmodel/responses"
)

// codexEnv is what the codex engine needs to reach the scripted model. The model is pinned:
// the CLI's default one offers its tools through a code-mode tool, not as plain functions.
func codexEnv(model *responses.Server) []string {
	return []string{"OPENAI_BASE_URL=" + model.BaseURL(), "OPENAI_API_KEY=scripted-model-key", "OPENAI_MODEL=gpt-5.1-codex"}
}

// TestCodexAgentsWithTheRealCLI runs background agents with the real Codex against a scripted
// model: the agent calls a catalog tool through mindroom-agent mcp, asks to run a command
// outside its sandbox, Codex's approval request reaches the operators, and their decision
// runs or stops it; the final message resumes the conversation, and the job records the
// thread and the tokens.
func TestCodexAgentsWithTheRealCLI(t *testing.T) {
	cli := enginetest.Codex(t)
	const thread = "$codex"
	for _, tc := range []struct {
		name     string
		decision operatorv1.Decision
		ran      bool
		result   string
	}{
		{"AnApprovedCommandRuns", operatorv1.Decision_DECISION_ALLOW_ONCE, true, "made-it"},
		{"ADeniedCommandDoesNotRun", operatorv1.Decision_DECISION_DENY, false, "rejected by user"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			made := filepath.Join(t.TempDir(), "made.txt")
			model := responses.Start(t,
				responses.Call("mcp__mindroom.test__echo", map[string]any{"marker": "echo-through-mcp"}),
				responses.Shell("touch "+made+" && echo made-it", true, "write outside the workspace"),
				responses.Say("The report: "+tc.name+"."))
			r := startEngine(t, "codex", cli, codexEnv(model)...)
			parent := openAs(t, r.env, stranger, thread)
			jobID := startAgent(t, r.env, parent, "echo, then write a file", "writer")

			p := r.watch.promptCreated(t, r.api)
			if p.GetKind() != operatorv1.PromptKind_PROMPT_KIND_PERMISSION || p.GetToolName() != "Bash" || p.GetToolUseId() != "call_2" ||
				p.GetConversation().GetThread() != thread || p.GetRequester() != stranger || !strings.Contains(p.GetMaskedInputJson(), made) {
				t.Fatalf("operators see %v", p)
			}
			r.decide(t, p, tc.decision, "")

			c := r.reports.awaitWithin(t, jobKey(jobID), engineBound)
			want := "Background agent \"writer\" (job " + itoa(jobID) + ") finished. Its report:\n\nThe report: " + tc.name + "."
			if !c.GetPost() || c.GetText() != want {
				t.Errorf("continuation %q (post %v), want %q", c.GetText(), c.GetPost(), want)
			}
			j := r.awaitJob(t, jobID, "finished", func(j *operatorv1.Job) bool { return j.GetStatus() == operatorv1.JobStatus_JOB_STATUS_FINISHED })
			run := j.GetEngineRun()
			if j.GetOutcome() != "success" || j.GetEngine() != "codex" || run.GetSessionId() == "" || run.GetTurns() != 1 ||
				run.GetInputTokens() <= 0 || run.GetOutputTokens() <= 0 || run.GetStopReason() != "completed" || run.GetIsError() {
				t.Errorf("job %v", j)
			}
			main := model.MainRequests()
			last := main[len(main)-1]
			if echo, _ := last.CallOutput("call_1"); !strings.Contains(echo, "echo-through-mcp") {
				t.Errorf("the catalog tool's output did not reach the model: %q", echo)
			}
			if out, _ := last.CallOutput("call_2"); !strings.Contains(out, tc.result) {
				t.Errorf("the model got %q for the command, want %q in it", out, tc.result)
			}
			_, err := os.Stat(made)
			if ran := err == nil; ran != tc.ran {
				t.Errorf("the command ran: %v, want %v", ran, tc.ran)
			}
		})
	}
}
