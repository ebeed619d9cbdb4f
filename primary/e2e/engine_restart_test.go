package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/enginetest"
	"github.com/turncli/turncli/internal/scriptedmodel/messages"
)

// TestAParkedClaudeAgentSurvivesAKilledPrimary: a background agent run by the real Claude
// Code asks to run a command; nobody decides within the hook's wait, so the job parks and the
// engine's process ends. The primary is SIGKILLed. The next primary on the same state keeps
// the job parked and its prompt open; an operator's decision there resumes the engine's
// session, the command runs and the same job reports.
func TestAParkedClaudeAgentSurvivesAKilledPrimary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binaries and the real Claude Code")
	}
	cli := enginetest.Claude(t)
	t.Setenv("PATH", filepath.Dir(cli)+string(os.PathListSeparator)+os.Getenv("PATH"))
	model := messages.Start(t,
		messages.ToolUse("Bash", `{"command":"echo ran > ran.txt && echo wrote it"}`),
		messages.Text("Done after the restart."))
	bin := mpBuild(t)
	state, grpcAddr := shellTempDir(t), freeLoopbackAddr(t)
	// The CLI is found on the PATH the shells pass on, as an engine installed outside the
	// standard directories is.
	flags := []string{"--agent-engine", "claude", "--shell-env-allow", "HOME,LANG,PATH,TMPDIR",
		"--agent-engine-env", "ANTHROPIC_BASE_URL=" + model.URL, "--agent-engine-env", "ANTHROPIC_API_KEY=scripted-model-key",
		"--agent-engine-env", "MINDROOM_AGENT_HOOK_WAIT=1s"}

	first, _ := startRestartPrimary(t, "mindroom-primary (first)", bin, state, grpcAddr, flags...)
	jobID := first.startAgent(t, "$parked", "write ran.txt")
	parked := first.awaitJob(t, jobID, "parked", func(j *operatorv1.Job) bool { return j.GetParked() != nil })
	if code := first.proc.stop(t, syscall.SIGKILL); code != -1 {
		t.Fatalf("first primary exit code %d after SIGKILL", code)
	}

	second, _ := startRestartPrimary(t, "mindroom-primary (second)", bin, state, grpcAddr, flags...)
	again := second.awaitJob(t, jobID, "still parked", func(j *operatorv1.Job) bool { return j.GetParked() != nil })
	if again.GetParked().GetPromptId() != parked.GetParked().GetPromptId() || again.GetStatus() != operatorv1.JobStatus_JOB_STATUS_RUNNING {
		t.Fatalf("after the restart: %v, before: %v", again, parked)
	}
	ctx, cancel := bearerCtx(second.admin)
	defer cancel()
	p, err := second.operator.GetPrompt(ctx, &operatorv1.GetPromptRequest{PromptId: parked.GetParked().GetPromptId()})
	if err != nil || p.GetPrompt().GetStatus() != operatorv1.PromptStatus_PROMPT_STATUS_PENDING {
		t.Fatalf("the parked job's prompt after the restart: %v, %v", p.GetPrompt(), err)
	}
	if _, err := second.operator.DecidePrompt(ctx, &operatorv1.DecidePromptRequest{
		PromptId: p.GetPrompt().GetId(), Decision: operatorv1.Decision_DECISION_ALLOW_ONCE,
	}); err != nil {
		t.Fatalf("decide: %v", err)
	}

	done := second.awaitJob(t, jobID, "finished", finished)
	run := done.GetEngineRun()
	if done.GetOutcome() != "success" || run.GetRuns() != 2 || run.GetSessionId() != parked.GetEngineRun().GetSessionId() || done.GetParked() != nil {
		t.Fatalf("job after the decision: %v", done)
	}
	if bash, ok := model.ToolResult(messages.ToolUseID(0)); !ok || !strings.Contains(bash.Text, "wrote it") {
		t.Errorf("the model got %+v for the command, want its output", bash)
	}
	if code := second.proc.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("second primary exit code %d", code)
	}
	checkOneContinuationEach(t, state, map[int64]*operatorv1.Job{jobID: done})
}

// startAgent asks for a background agent in a new response of the conversation thread and
// returns its job id.
func (r *restartRig) startAgent(t *testing.T, thread, task string) int64 {
	t.Helper()
	ctx, cancel := bearerCtx(r.runtime)
	defer cancel()
	resp, err := r.api.OpenResponse(ctx, &responsev1.OpenResponseRequest{
		AgentName: "tester", RequesterId: "@alice:example.org",
		Conversation: &conversationv1.Conversation{Channel: "!room:example.org", Thread: thread},
		ShellMode:    responsev1.ShellMode_SHELL_MODE_MINIMAL,
	})
	if err != nil {
		t.Fatalf("OpenResponse: %v", err)
	}
	args, _ := json.Marshal(map[string]string{"task": task, "label": thread})
	out, err := mpRunBash(ctx, r.api, resp.GetResponseId(), "agent",
		"mindroom-agent tools call interaction.run_agent_in_background "+bashQuote(string(args)), nil)
	if err != nil {
		t.Fatalf("RunBash: %v", err)
	}
	m := regexp.MustCompile(`"job_id":(\d+)`).FindStringSubmatch(out.stdout)
	if m == nil || out.result.GetExitCode() != 0 {
		t.Fatalf("run_agent_in_background: exit %d stdout %q stderr %q", out.result.GetExitCode(), out.stdout, out.stderr)
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	_, _ = r.api.CloseResponse(ctx, &responsev1.CloseResponseRequest{ResponseId: resp.GetResponseId()})
	return id
}
