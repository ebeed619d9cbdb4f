package claude

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/turncli/turncli/client"
	"github.com/turncli/turncli/client/engines"
)

// hookInput is what the CLI tells a PreToolUse hook on its standard input.
type hookInput struct {
	HookEventName string          `json:"hook_event_name"`
	SessionID     string          `json:"session_id"`
	Cwd           string          `json:"cwd"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
	ToolUseID     string          `json:"tool_use_id"`
}

// maxHookInput bounds the hook's input: a tool's input can be a whole file to write.
const maxHookInput = 32 << 20

// The decisions a PreToolUse hook answers.
const (
	decisionAllow = "allow"
	decisionDeny  = "deny"
	// decisionDefer ends a headless run with the tool use pending; resuming the session
	// asks the hook again about the same tool use.
	decisionDefer = "defer"
)

// Hook is `mindroom-agent engine claude-hook`, the PreToolUse hook Run registers: it reads
// the tool use on standard input and answers on standard output whether it may run (see the
// package comment). It always exits 0 with a decision or, for a tool left to the permission
// mode, with none: a hook that fails decides nothing, and the CLI would deny the tool use
// with a message that says less than ours.
func Hook(ctx context.Context, agent *client.Agent, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "mindroom-agent engine %s takes no arguments; the claude CLI runs it as a hook\n", HookCommand)
		return client.ExitInvalid
	}
	var in hookInput
	b, err := io.ReadAll(io.LimitReader(stdin, maxHookInput+1))
	if err == nil && len(b) > maxHookInput {
		err = fmt.Errorf("more than %d bytes", maxHookInput)
	}
	if err == nil {
		err = json.Unmarshal(b, &in)
	}
	if err != nil {
		return answer(stdout, decisionDeny, "Permission was not granted: the hook could not read the tool use ("+err.Error()+").")
	}
	if in.HookEventName != "PreToolUse" {
		return 0
	}
	switch permissionOf(in.ToolName, in.ToolInput, in.Cwd) {
	case allowed:
		return answer(stdout, decisionAllow, "A tool of the response: the primary gates each call.")
	case leftToMode:
		return 0
	}
	if d, ok := resumedDecision(getenv, in.ToolUseID); ok {
		return answerDecision(stdout, d.Behavior, d.Message)
	}
	wait, err := hookWait(getenv)
	if err != nil {
		return answer(stdout, decisionDeny, "Permission was not granted: "+err.Error()+".")
	}
	asked := ask(ctx, agent, in, wait)
	switch {
	case asked.decided:
		return answerDecision(stdout, asked.behavior, asked.message)
	case asked.callID == "":
		return answer(stdout, decisionDeny, asked.message)
	}
	// Still waiting: park the run instead of holding a process while people decide.
	parked := engines.Parked{CallID: asked.callID, ToolUseID: in.ToolUseID, Tool: in.ToolName}
	if err := writeParked(getenv(engines.HomeEnv), parked); err != nil {
		return answer(stdout, decisionDeny, fmt.Sprintf("Permission was not granted: nobody decided within %v, and the run could not be parked (%v).", wait, err))
	}
	return answer(stdout, decisionDefer, fmt.Sprintf("Waiting for people to decide (call %s).", asked.callID))
}

// resumedDecision is the decision a resumed run was given, when it is about this tool use.
func resumedDecision(getenv func(string) string, toolUseID string) (engines.Decision, bool) {
	v := getenv(engines.DecisionEnv)
	if v == "" || getenv(engines.ResumeEnv) == "" {
		return engines.Decision{}, false
	}
	var d engines.Decision
	if json.Unmarshal([]byte(v), &d) != nil || d.ToolUseID == "" || d.ToolUseID != toolUseID {
		return engines.Decision{}, false
	}
	return d, true
}

// answerDecision answers people's decision: allow, or a denial with their reason.
func answerDecision(stdout io.Writer, behavior, message string) int {
	if behavior == decisionAllow {
		return answer(stdout, decisionAllow, "Allowed by the people of the conversation.")
	}
	if strings.TrimSpace(message) == "" {
		message = "Denied by the people of the conversation."
	}
	return answer(stdout, decisionDeny, message)
}

// answer writes the hook's decision.
func answer(stdout io.Writer, decision, reason string) int {
	b, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName":            "PreToolUse",
		"permissionDecision":       decision,
		"permissionDecisionReason": reason,
	}})
	_, _ = stdout.Write(append(b, '\n'))
	return 0
}

// askOutcome is how asking people went: their decision; still waiting on callID; or, with
// no callID, a denial saying why nobody could be asked.
type askOutcome struct {
	decided  bool
	behavior string
	message  string
	callID   string
}

// ask submits interaction.permission_prompt for the tool use and waits for a decision until
// wait has passed.
func ask(ctx context.Context, agent *client.Agent, in hookInput, wait time.Duration) askOutcome {
	notAsked := func(what string, err error) askOutcome {
		return askOutcome{message: fmt.Sprintf("Permission was not granted: %s (%v).", what, err)}
	}
	conn, err := agent.Connect()
	if err != nil {
		return notAsked("nobody could be asked", err)
	}
	callID, err := agent.NewCallID()
	if err != nil {
		return notAsked("nobody could be asked", err)
	}
	input := any(map[string]any{})
	if len(in.ToolInput) > 0 {
		input = in.ToolInput
	}
	deadline := time.Now().Add(wait)
	r, err := conn.Post(ctx, map[string]any{
		"operation": "tools.call", "call_id": callID,
		"toolkit": "interaction", "function": "permission_prompt",
		"arguments": map[string]any{"tool_name": in.ToolName, "input": input, "tool_use_id": in.ToolUseID},
	})
	if err != nil {
		return notAsked("the request for permission was not accepted", err)
	}
	if r, err = conn.Wait(ctx, callID, r, deadline); err != nil {
		return notAsked("waiting for the decision failed", err)
	}
	status, err := r.Status()
	if err != nil {
		return notAsked("the answer to the request could not be read", err)
	}
	if !client.IsTerminal(status) {
		return askOutcome{callID: callID}
	}
	return decisionOf(status, r.Object()["outcome"])
}

// decisionOf reads a terminal permission_prompt receipt: a completed call's outcome is the
// decision as JSON text; anything else denies.
func decisionOf(status string, outcome any) askOutcome {
	denied := func(why string) askOutcome {
		return askOutcome{decided: true, behavior: decisionDeny, message: "Permission was not granted: " + why + "."}
	}
	if status != client.StatusCompleted {
		text, _ := outcome.(string)
		return denied(fmt.Sprintf("the request %s (%s)", status, text))
	}
	var d struct {
		Behavior string `json:"behavior"`
		Message  string `json:"message"`
	}
	text, _ := outcome.(string)
	if json.Unmarshal([]byte(text), &d) != nil || (d.Behavior != decisionAllow && d.Behavior != decisionDeny) {
		return denied("the answer to the request was not a decision")
	}
	return askOutcome{decided: true, behavior: d.Behavior, message: d.Message}
}
