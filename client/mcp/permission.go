package mcp

import (
	"strings"

	"github.com/turncli/turncli/client"
	"github.com/turncli/turncli/internal/canonjson"
)

// permissionPrompt is the function an engine names as its permission hook, for example
// Claude Code's --permission-prompt-tool mcp__SERVER__permission_prompt.
var permissionPrompt = toolRef{interactionToolkit, "permission_prompt"}

// A permission hook takes a decision, and only a decision: the engine reads the text of a
// normal result as {"behavior":"allow",…} or {"behavior":"deny","message":…}. So when no
// decision can be had (the Agent CLI refuses or cannot be reached, the call is cancelled,
// interrupted or fails, waiting for it fails, or this server stops), the answer is a denial
// saying why, never a JSON-RPC error or an error result.

// stoppedReason is the denial of a call still waiting when the server stopped.
var stoppedReason = notGranted("mindroom-agent mcp stopped before anyone decided", "")

// notGranted is a denial's message: what went wrong, then the detail that says how.
func notGranted(what, detail string) string {
	msg := "Permission was not granted: " + what
	if detail = strings.TrimSuffix(strings.TrimSpace(detail), "."); detail != "" {
		msg += " (" + detail + ")"
	}
	return msg + "."
}

// permissionAnswer is the tools/call answer of a permission_prompt call: the decision the
// server gave, or a denial saying why there is none.
func (run callRun) permissionAnswer() map[string]any {
	if run.receipt == nil {
		return denial(run.reason, run.callID)
	}
	status, _ := run.receipt.Object()["status"].(string)
	outcome := run.receipt.Object()["outcome"]
	switch {
	case status == client.StatusCompleted && isDecision(outcome):
		return callResult(run.receipt, run.version)
	case status == client.StatusCancelled:
		return denial(notGranted("the request was cancelled before anyone decided", outcomeText(outcome, status)), run.callID)
	case status == client.StatusFailed:
		return denial(notGranted("the request failed", outcomeText(outcome, status)), run.callID)
	}
	return denial(notGranted("the answer to the request was not a decision", ""), run.callID)
}

// isDecision reports whether a completed call's outcome is a permission decision: a JSON text
// (or an object) whose behavior is allow or deny.
func isDecision(outcome any) bool {
	obj, ok := outcome.(map[string]any)
	if text, isText := outcome.(string); isText {
		var err error
		obj, err = canonjson.ParseObject([]byte(text))
		ok = err == nil
	}
	return ok && (obj["behavior"] == "allow" || obj["behavior"] == "deny")
}

// denial is a permission_prompt answer that denies with the reason.
func denial(reason, callID string) map[string]any {
	text, _ := canonjson.Marshal(map[string]any{"behavior": "deny", "message": reason})
	res := map[string]any{"content": []any{textContent(string(text))}, "isError": false}
	if callID != "" {
		res["_meta"] = map[string]any{metaCallID: callID}
	}
	return res
}
