package claude_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turncli/turncli/client/engines"
	"github.com/turncli/turncli/internal/scriptedmodel/messages"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/store"
)

func TestAToolOfTheResponseRunsWithoutAskingAndTheModelGetsItsResult(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	model := messages.Start(t, messages.ToolUse("mcp__mindroom__test__echo", `{"word":"hello"}`), messages.Text("Echoed."))
	s := r.start(t, &engineRun{model: model, task: "Echo hello."})
	res, progress := s.wait(t)

	if res.Status != engines.StatusFinished || res.Report != "Echoed." || res.Turns != 2 {
		t.Errorf("result %+v\n%s", res, progress)
	}
	// The primary ran the call, admitted by the driver's Bash command.
	resp, ok := r.env.Primary.Internals().Responses.Get(r.response)
	if !ok {
		t.Fatal("the response is gone")
	}
	var echoes []response.ReceiptInspection
	for _, rc := range resp.Inspect(100).Receipts {
		if rc.Toolkit == "test" && rc.Function == "echo" {
			echoes = append(echoes, rc)
		}
	}
	if len(echoes) != 1 || echoes[0].Status != response.Completed || echoes[0].Parent != s.bashID || string(echoes[0].Outcome) != `{"word":"hello"}` {
		t.Errorf("echo receipts %+v, want one completed in %s with outcome {\"word\":\"hello\"}", echoes, s.bashID)
	}
	if tr := toolResult(t, model, 0); tr.IsError || modelText(tr) != `{"word":"hello"}` {
		t.Errorf("the model got %+v", tr)
	}
	if p := r.prompts(t); len(p) != 0 {
		t.Errorf("people were asked: %+v", p)
	}
	if !strings.Contains(progress, `> mcp__mindroom__test__echo {"word":"hello"}`) {
		t.Errorf("progress does not show the tool use:\n%s", progress)
	}
}

// writeFile is a Bash tool use that needs people's permission: it writes out.txt.
const writeFile = `{"command":"echo approved > out.txt && echo wrote it","description":"Write out.txt"}`

func TestToolUsesWaitForPeople(t *testing.T) {
	t.Parallel()
	r := newRig(t)

	t.Run("AllowedBashRunsAndTheModelGetsItsOutput", func(t *testing.T) {
		model := messages.Start(t, messages.ToolUse("Bash", writeFile), messages.Text("Wrote the file."))
		run := &engineRun{model: model, task: "Write out.txt."}
		s := r.start(t, run)
		p := r.pendingPrompt(t, messages.ToolUseID(0))
		if p.Kind != store.PromptPermission || p.ToolName != "Bash" || !strings.Contains(string(p.MaskedInput), `"command":"echo approved > out.txt && echo wrote it"`) {
			t.Errorf("people see %+v (input %s)", p, p.MaskedInput)
		}
		r.decide(t, p, store.DecisionAllowOnce, "")
		res, _ := s.wait(t)

		if res.Status != engines.StatusFinished || res.Report != "Wrote the file." {
			t.Errorf("result %+v", res)
		}
		if got := fileText(t, filepath.Join(run.dir, "out.txt")); got != "approved\n" {
			t.Errorf("out.txt holds %q, want %q", got, "approved\n")
		}
		if tr := toolResult(t, model, 0); tr.IsError || modelText(tr) != "wrote it" {
			t.Errorf("the model got %+v", tr)
		}
	})

	t.Run("DeniedBashDoesNotRunAndTheModelGetsTheReason", func(t *testing.T) {
		model := messages.Start(t, messages.ToolUse("Bash", writeFile), messages.Text("Could not write."))
		run := &engineRun{model: model, task: "Write out.txt."}
		s := r.start(t, run)
		r.decide(t, r.pendingPrompt(t, messages.ToolUseID(0)), store.DecisionDeny, "not in this repository")
		res, progress := s.wait(t)

		if res.Status != engines.StatusFinished || res.Report != "Could not write." {
			t.Errorf("result %+v", res)
		}
		if got := fileText(t, filepath.Join(run.dir, "out.txt")); got != "" {
			t.Errorf("out.txt was written: %q", got)
		}
		if tr := toolResult(t, model, 0); !tr.IsError || modelText(tr) != "PreToolUse:Bash hook error: not in this repository" {
			t.Errorf("the model got %+v", tr)
		}
		if !strings.Contains(progress, "< error: PreToolUse:Bash hook error: not in this repository") {
			t.Errorf("progress does not show the denial:\n%s", progress)
		}
	})

	t.Run("AReadOutsideTheWorkingDirectoryIsAskedFor", func(t *testing.T) {
		outside := filepath.Join(t.TempDir(), "notes.txt")
		if err := os.WriteFile(outside, []byte("outside the working directory\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		model := messages.Start(t, messages.ToolUse("Read", `{"file_path":"`+outside+`"}`), messages.Text("Read the notes."))
		s := r.start(t, &engineRun{model: model, task: "Read the notes."})
		p := r.pendingPrompt(t, messages.ToolUseID(0))
		if p.ToolName != "Read" {
			t.Errorf("people are asked about %q, want Read", p.ToolName)
		}
		r.decide(t, p, store.DecisionAllowOnce, "")
		res, _ := s.wait(t)

		if res.Status != engines.StatusFinished || res.Report != "Read the notes." {
			t.Errorf("result %+v", res)
		}
		if tr := toolResult(t, model, 0); tr.IsError || modelText(tr) != "1\toutside the working directory\n2\t" {
			t.Errorf("the model got %+v", tr)
		}
	})
}

func TestALongWaitParksTheRunAndTheDecisionResumesIt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, action, text string
		// What the resumed run shows: the report, out.txt, the tool result the model got.
		report, file string
		result       messages.ToolResult
	}{
		{"AllowedTheToolRuns", store.DecisionAllowOnce, "", "Done after the wait.", "approved\n",
			messages.ToolResult{ToolUseID: messages.ToolUseID(0), Text: "wrote it"}},
		{"DeniedTheModelGetsTheReason", store.DecisionDeny, "not today", "Done after the wait.", "",
			messages.ToolResult{ToolUseID: messages.ToolUseID(0), Text: "PreToolUse:Bash hook error: not today", IsError: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t) // a primary of its own: the tool use ids are the same in both
			model := messages.Start(t, messages.ToolUse("Bash", writeFile), messages.Text("Done after the wait."))
			run := &engineRun{model: model, task: "Write out.txt.", env: map[string]string{"MINDROOM_AGENT_HOOK_WAIT": "1s"}}
			first := r.start(t, run)
			parked := first.resultLine(t)

			p := r.pendingPrompt(t, messages.ToolUseID(0))
			want := engines.Parked{CallID: p.CallID, ToolUseID: messages.ToolUseID(0), Tool: "Bash"}
			if parked.Status != engines.StatusParked || parked.Parked == nil || *parked.Parked != want ||
				parked.StopReason != "tool_deferred" || parked.IsError || !sessionID.MatchString(parked.Session) {
				t.Fatalf("parked result %+v (parked %+v), want parked on %+v", parked, parked.Parked, want)
			}
			if got := fileText(t, filepath.Join(run.dir, "out.txt")); got != "" {
				t.Errorf("out.txt was written before anyone decided: %q", got)
			}
			r.decide(t, p, tc.action, tc.text)
			first.wait(t) // the first command's window drains once its permission request is decided

			resumed := &engineRun{model: model, dir: run.dir, home: run.home, env: map[string]string{
				engines.ResumeEnv: parked.Session, engines.DecisionEnv: r.decisionOf(t, *parked.Parked),
				"MINDROOM_AGENT_HOOK_WAIT": "1s",
			}}
			res, _ := r.runEngine(t, resumed)

			if res.Status != engines.StatusFinished || res.Report != tc.report || res.Session != parked.Session || res.StopReason != "success" {
				t.Errorf("resumed result %+v, want finished in session %s", res, parked.Session)
			}
			if got := fileText(t, filepath.Join(run.dir, "out.txt")); got != tc.file {
				t.Errorf("out.txt holds %q, want %q", got, tc.file)
			}
			tr := toolResult(t, model, 0)
			if tr.Text = modelText(tr); tr != tc.result {
				t.Errorf("the model got %+v, want %+v", tr, tc.result)
			}
			if n := r.promptsFor(t, messages.ToolUseID(0), p.CallID); n != 0 {
				t.Errorf("%d more permission requests for the tool use, want only the one decided", n)
			}
		})
	}
}

// decisionOf is the Decision a resumed run gets for a parked tool use, read as the primary
// reads it: from the outcome of the permission request's call.
func (r *rig) decisionOf(t *testing.T, parked engines.Parked) string {
	t.Helper()
	resp, ok := r.env.Primary.Internals().Responses.Get(r.response)
	if !ok {
		t.Fatal("the response is gone")
	}
	for _, rc := range resp.Inspect(1000).Receipts {
		if rc.CallID != parked.CallID {
			continue
		}
		var text string
		var d engines.Decision
		if rc.Status != response.Completed || json.Unmarshal(rc.Outcome, &text) != nil || json.Unmarshal([]byte(text), &d) != nil {
			t.Fatalf("permission request %s: %v, outcome %s", parked.CallID, rc.Status, rc.Outcome)
		}
		d.ToolUseID = parked.ToolUseID
		b, _ := json.Marshal(d)
		return string(b)
	}
	t.Fatalf("no receipt of the permission request %s", parked.CallID)
	return ""
}

// promptsFor counts the permission requests for a tool use other than the call's.
func (r *rig) promptsFor(t *testing.T, toolUseID, except string) int {
	t.Helper()
	n := 0
	for _, p := range r.prompts(t) {
		if p.ToolUseID == toolUseID && p.CallID != except {
			n++
		}
	}
	return n
}
