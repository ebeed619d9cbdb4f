package messages

import "encoding/json"

// Step is one answer of the model in the main conversation: a text that ends the turn, or a
// tool use the engine runs before it asks again.
type Step struct {
	// Text is the final message, when Tool is empty.
	Text string
	// Tool is the name of the tool used, as the engine offers it (for example "Bash" or
	// "mcp__mindroom__report_progress"), and Input its input, a JSON object.
	Tool  string
	Input json.RawMessage
}

// Text is a step that answers text and ends the turn.
func Text(s string) Step { return Step{Text: s} }

// ToolUse is a step that uses the tool with input, a JSON object.
func ToolUse(tool, input string) Step {
	return Step{Tool: tool, Input: json.RawMessage(input)}
}

// OutOfScript is the text answered to a main-conversation request once the script is played
// through; Server.Overrun counts them.
const OutOfScript = "The scripted model has no more steps."

// SideAnswer is the text answered to requests beside the main conversation.
const SideAnswer = "scripted side answer"
