package codex_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/turncli/turncli/client/engines"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/scriptedmodel/responses"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/interaction"
	"github.com/turncli/turncli/primary/store"
)

// TestCodexEngine runs whole turns of the real codex CLI.
func TestCodexEngine(t *testing.T) {
	env := testenv.Start(t)

	t.Run("TextOnlyTurnReportsTheMessageThreadAndUsage", func(t *testing.T) {
		r := newRun(t, env, "Say hello.", responses.Step{Text: "Hello from the script.", Usage: responses.Usage{InputTokens: 321, OutputTokens: 12}})
		f := r.run(t)
		got := f.result
		if got.Session == "" {
			t.Errorf("no thread id in %+v", got)
		}
		got.Session = ""
		want := engines.Result{Engine: "codex", Status: engines.StatusFinished, Report: "Hello from the script.",
			Turns: 1, InputTokens: 321, OutputTokens: 12, StopReason: "completed"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("result %+v, want %+v\nstdout:\n%s", got, want, f.Stdout)
		}
		if !strings.Contains(f.Stdout, "[message] Hello from the script.\n") {
			t.Errorf("the log does not show the message:\n%s", f.Stdout)
		}
		main := r.model.MainRequests()
		if len(main) != 1 || !strings.Contains(string(main[0].Body), "Say hello.") {
			t.Errorf("the model was not sent the brief once: %d requests", len(main))
		}
	})

	t.Run("HostCodexConfigAndRepositoryInstructionsAreNotRead", func(t *testing.T) {
		r := newRun(t, env, "Say hello.", responses.Say("done"))
		// A host configuration that would send the model elsewhere, skip approvals and add
		// instructions; and instructions in the working directory, as a repository has them.
		writeFile(t, filepath.Join(r.home, ".codex", "config.toml"), `model_provider = "elsewhere"
approval_policy = "never"
developer_instructions = "HOST-CONFIG-INSTRUCTIONS"
[model_providers.elsewhere]
name = "elsewhere"
base_url = "http://127.0.0.1:9/v1"
wire_api = "responses"
`)
		writeFile(t, filepath.Join(r.home, ".codex", "AGENTS.md"), "HOST-AGENTS-INSTRUCTIONS\n")
		writeFile(t, filepath.Join(r.work, "AGENTS.md"), "REPOSITORY-AGENTS-INSTRUCTIONS\n")
		f := r.run(t)
		if f.result.Status != engines.StatusFinished || f.result.Report != "done" {
			t.Fatalf("result %+v\nstderr:\n%s", f.result, f.Stderr)
		}
		for _, req := range r.model.Requests() {
			for _, marker := range []string{"HOST-CONFIG-INSTRUCTIONS", "HOST-AGENTS-INSTRUCTIONS", "REPOSITORY-AGENTS-INSTRUCTIONS"} {
				if strings.Contains(string(req.Body), marker) {
					t.Errorf("the model was sent %s", marker)
				}
			}
		}
	})

	t.Run("CatalogToolThroughMCPReachesThePrimaryAndItsOutputTheModel", func(t *testing.T) {
		r := newRun(t, env, "Echo.",
			responses.Call("mcp__mindroom.test__echo", map[string]any{"marker": "echo-through-mcp"}),
			responses.Say("echoed"))
		f := r.run(t)
		if f.result.Status != engines.StatusFinished || f.result.Report != "echoed" {
			t.Fatalf("result %+v\nstdout:\n%s\nstderr:\n%s\ntools: %q", f.result, f.Stdout, f.Stderr, r.model.MainRequests()[0].ToolNames())
		}
		main := r.model.MainRequests()
		out, ok := main[len(main)-1].CallOutput("call_1")
		if !ok || !strings.Contains(out, `"marker":"echo-through-mcp"`) {
			t.Errorf("the model got %q (%v) for the echo, want the echoed arguments\nstdout:\n%s\ntools: %q", out, ok, f.Stdout, main[0].ToolNames())
		}
		for _, line := range []string{"[tool] mindroom.test__echo {\"marker\":\"echo-through-mcp\"}\n", "[tool] mindroom.test__echo completed\n"} {
			if !strings.Contains(f.Stdout, line) {
				t.Errorf("the log lacks %q:\n%s", line, f.Stdout)
			}
		}
		receipts := f.Result.GetReceipts()
		var echoed bool
		for _, rc := range receipts {
			echoed = echoed || (rc.GetToolkit() == "test" && rc.GetFunction() == "echo" && rc.GetStatus() == responsev1.CallStatus_CALL_STATUS_COMPLETED)
		}
		if !echoed {
			t.Errorf("the primary has no completed receipt of test.echo in the engine's command: %v", receipts)
		}
	})

	t.Run("ApprovedCommandRunsAndTheModelGetsItsOutput", func(t *testing.T) {
		outside := t.TempDir()
		made := filepath.Join(outside, "approved.txt")
		r := newRun(t, env, "Write a file.",
			responses.Shell("touch "+made+" && echo made-it", true, "write outside the workspace"),
			responses.Say("written"))
		wait := r.start(t)
		p := r.waitPrompt(t)
		checkPrompt(t, p, r.work, "write outside the workspace", "touch "+made)
		decide(t, env, p.ID, store.DecisionAllowOnce)
		f := wait()
		if f.result.Status != engines.StatusFinished || f.result.Report != "written" {
			t.Fatalf("result %+v\nstdout:\n%s", f.result, f.Stdout)
		}
		if _, err := os.Stat(made); err != nil {
			t.Errorf("the approved command did not run: %v", err)
		}
		main := r.model.MainRequests()
		if out, _ := main[len(main)-1].CallOutput("call_1"); !strings.Contains(out, "made-it") {
			t.Errorf("the model got %q, want the command's output", out)
		}
		for _, line := range []string{"[approval] asking the conversation's people: Bash ", "[approval] allowed: Bash\n", "[command] exit 0: "} {
			if !strings.Contains(f.Stdout, line) {
				t.Errorf("the log lacks %q:\n%s", line, f.Stdout)
			}
		}
	})

	t.Run("DeniedCommandDoesNotRunAndTheModelIsTold", func(t *testing.T) {
		outside := t.TempDir()
		made := filepath.Join(outside, "denied.txt")
		r := newRun(t, env, "Write a file.",
			responses.Shell("touch "+made, true, "write outside the workspace"),
			responses.Say("could not write"))
		wait := r.start(t)
		p := r.waitPrompt(t)
		decide(t, env, p.ID, store.DecisionDeny)
		f := wait()
		if f.result.Status != engines.StatusFinished || f.result.Report != "could not write" {
			t.Fatalf("result %+v\nstdout:\n%s", f.result, f.Stdout)
		}
		if _, err := os.Stat(made); !os.IsNotExist(err) {
			t.Errorf("the denied command ran: %v", err)
		}
		main := r.model.MainRequests()
		if out, _ := main[len(main)-1].CallOutput("call_1"); !strings.Contains(out, "rejected by user") {
			t.Errorf("the model got %q, want the rejection", out)
		}
		if !strings.Contains(f.Stdout, "[approval] declined: Bash: ") {
			t.Errorf("the log does not show the denial:\n%s", f.Stdout)
		}
	})

	t.Run("ModelErrorFailsTheTurn", func(t *testing.T) {
		r := newRun(t, env, "Say hello.") // no step: the model answers 400
		r.refusalsExpected = true
		f := r.run(t)
		got := f.result
		if got.Status != engines.StatusFailed || !got.IsError || got.StopReason != "failed" || got.Turns != 1 || got.Report != "" || got.Session == "" {
			t.Errorf("result %+v, want a failed turn of a thread without a report", got)
		}
		want := []string{`{"error":{"message":"scripted model: main request 1 after the script's 0 steps","type":"invalid_request_error"}}`}
		if !reflect.DeepEqual(got.Errors, want) {
			t.Errorf("errors %q, want the model's once: %q", got.Errors, want)
		}
	})

	t.Run("SignalInterruptsTheTurnAndFailsTheRun", func(t *testing.T) {
		made := filepath.Join(t.TempDir(), "never.txt")
		r := newRun(t, env, "Write a file.", responses.Shell("touch "+made, true, "write outside the workspace"))
		r.pidFile = filepath.Join(t.TempDir(), "pid")
		wait := r.start(t)
		p := r.waitPrompt(t)
		b, err := os.ReadFile(r.pidFile)
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		// The driver ends at once; the prompt it submitted is the window's admitted work, so its
		// command ends once people decided (a primary cancelling the job ends it itself).
		deadline := time.Now().Add(waitBound)
		for syscall.Kill(pid, 0) == nil {
			if time.Now().After(deadline) {
				t.Fatalf("the driver still runs %v after SIGTERM", waitBound)
			}
			time.Sleep(pollEvery)
		}
		decide(t, env, p.ID, store.DecisionDeny)
		f := wait()
		got := f.result
		got.Session = ""
		want := engines.Result{Engine: "codex", Status: engines.StatusFailed, Turns: 1, InputTokens: 100, OutputTokens: 10,
			StopReason: "interrupted", IsError: true, Errors: []string{"the run was stopped by a signal before the turn completed"}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("result %+v, want %+v\nstdout:\n%s\nstderr:\n%s", got, want, f.Stdout, f.Stderr)
		}
		if _, err := os.Stat(made); !os.IsNotExist(err) {
			t.Errorf("the command waiting for approval ran: %v", err)
		}
		if !strings.Contains(f.Stdout, "[stopped] interrupting the turn\n") {
			t.Errorf("the log does not say the turn was interrupted:\n%s", f.Stdout)
		}
	})
}

// checkPrompt checks what people are asked about a command.
func checkPrompt(t *testing.T, p store.Prompt, cwd, reason, command string) {
	t.Helper()
	if p.Kind != store.PromptPermission || p.ToolName != "Bash" || p.ToolUseID != "call_1" {
		t.Errorf("prompt of kind %s, tool %q, use %q; want a permission for Bash, call_1", p.Kind, p.ToolName, p.ToolUseID)
	}
	var input map[string]any
	if err := json.Unmarshal(p.MaskedInput, &input); err != nil {
		t.Fatalf("masked input %s: %v", p.MaskedInput, err)
	}
	cmd, _ := input["command"].(string)
	if len(input) != 3 || input["cwd"] != cwd || input["reason"] != reason || !strings.Contains(cmd, command) {
		t.Errorf("people see %s; want the command with %q, cwd %q and reason %q", p.MaskedInput, command, cwd, reason)
	}
}

// decide decides a prompt as a member operator would.
func decide(t *testing.T, env *testenv.Env, id int64, action string) {
	t.Helper()
	op := store.Operator{Name: "mia", Role: store.RoleMember}
	if _, err := env.Primary.Internals().Interaction.Prompts.DecidePrompt(context.Background(), id, op, interaction.PromptDecision{Action: action}); err != nil {
		t.Fatalf("decide %s on prompt %d: %v", action, id, err)
	}
}
