package responses

import "encoding/json"

// Step is the model's answer to one request of the main conversation: Text, or a call of the
// tool Call names with Arguments.
type Step struct {
	// Text is a final message.
	Text string
	// Call is the name of a function tool to call, as Request.ToolNames gives it: a tool of a
	// namespace as NAMESPACE.NAME, for example Codex's MCP tool "mcp__mindroom.test__echo".
	Call string
	// Arguments is the call's arguments as JSON text.
	Arguments string
	// CallID is the call's id; empty: "call_N" for the Nth step, counted from 1.
	CallID string
	// Usage is the token usage the response reports; zero: DefaultUsage.
	Usage Usage
}

// Usage is the usage of one response.
type Usage struct {
	InputTokens  int64
	OutputTokens int64
}

// DefaultUsage is what a step reports when it says nothing.
var DefaultUsage = Usage{InputTokens: 100, OutputTokens: 10}

// sideAnswer is the text of every side request.
const sideAnswer = "ok"

// Say is a step that ends the turn with text.
func Say(text string) Step { return Step{Text: text} }

// Call is a step that calls the tool name with arguments, marshalled as JSON.
func Call(name string, arguments any) Step {
	b, err := json.Marshal(arguments)
	if err != nil {
		panic("responses.Call: " + err.Error())
	}
	return Step{Call: name, Arguments: string(b)}
}

// Shell is a step that runs cmd through Codex's shell tool exec_command. Escalated asks to run
// it outside the sandbox, which needs an approval under the on-request policy; justification
// is the question people see.
func Shell(cmd string, escalated bool, justification string) Step {
	args := map[string]any{"cmd": cmd}
	if escalated {
		args["sandbox_permissions"] = "require_escalated"
		args["justification"] = justification
	}
	return Call("exec_command", args)
}
