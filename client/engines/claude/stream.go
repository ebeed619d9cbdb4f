package claude

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/turncli/turncli/client/engines"
)

// The CLI's stream-json output is one JSON event a line. Run shows what a person following
// the job wants to see, one short line each, and keeps the last result event.

// event is the part of a stream-json event the driver reads.
type event struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	// Message is an object for assistant and user events, a string for a permission denial.
	Message json.RawMessage `json:"message"`

	// Of the init event.
	Model   string `json:"model"`
	Version string `json:"claude_code_version"`

	// Of a permission_denied event.
	ToolName string `json:"tool_name"`

	// Of the result event.
	Result          string   `json:"result"`
	IsError         bool     `json:"is_error"`
	NumTurns        int      `json:"num_turns"`
	TotalCostUSD    float64  `json:"total_cost_usd"`
	StopReason      string   `json:"stop_reason"`
	TerminalReason  string   `json:"terminal_reason"`
	Errors          []string `json:"errors"`
	Usage           *usage   `json:"usage"`
	DeferredToolUse *struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"deferred_tool_use"`
}

type usage struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
}

// message is the message of an assistant or user event.
type message struct {
	Content []block `json:"content"`
}

// block is a content block: text, a tool use or a tool result.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// Lengths of what a progress line shows of a tool's input and result.
const (
	inputShown  = 160
	resultShown = 240
)

// maxEventLine bounds one line of the CLI's output; a tool result can be long.
const maxEventLine = 64 << 20

// streamEnd is what reading the CLI's events gave: the last result event, nil when there was
// none, and the session the events named, so that a run stopped before its result still says
// which session it was.
type streamEnd struct {
	result  *event
	session string
	err     error
}

// readEvents shows the events of r on out. A line that is not JSON is shown as it is.
func readEvents(r io.Reader, out io.Writer) streamEnd {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventLine)
	var end streamEnd
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		if err := json.Unmarshal(line, &ev); err != nil || ev.Type == "" {
			writeLine(out, string(line))
			continue
		}
		if ev.SessionID != "" {
			end.session = ev.SessionID
		}
		if ev.Type == "result" {
			e := ev
			end.result = &e
		}
		for _, l := range progressLines(ev) {
			writeLine(out, l)
		}
	}
	end.err = sc.Err()
	return end
}

// progressLines are the lines shown for one event.
func progressLines(ev event) []string {
	switch ev.Type {
	case "system":
		switch ev.Subtype {
		case "init":
			return []string{fmt.Sprintf("claude %s: session %s, model %s", ev.Version, ev.SessionID, ev.Model)}
		case "permission_denied":
			var msg string
			_ = json.Unmarshal(ev.Message, &msg)
			return []string{fmt.Sprintf("denied %s: %s", ev.ToolName, oneLine(msg, resultShown))}
		}
	case "assistant", "user":
		var m message
		if json.Unmarshal(ev.Message, &m) != nil {
			return nil
		}
		var lines []string
		for _, b := range m.Content {
			switch b.Type {
			case "text":
				if ev.Type == "assistant" && strings.TrimSpace(b.Text) != "" {
					lines = append(lines, strings.TrimSpace(b.Text))
				}
			case "tool_use":
				lines = append(lines, fmt.Sprintf("> %s %s", b.Name, toolInput(b.Name, b.Input)))
			case "tool_result":
				word := "result"
				if b.IsError {
					word = "error"
				}
				lines = append(lines, fmt.Sprintf("< %s: %s", word, oneLine(resultText(b.Content), resultShown)))
			}
		}
		return lines
	case "result":
		line := fmt.Sprintf("%s after %d turns, $%.4f", ev.Subtype, ev.NumTurns, ev.TotalCostUSD)
		for _, e := range ev.Errors {
			line += "; " + oneLine(e, resultShown)
		}
		if ev.DeferredToolUse != nil {
			line += fmt.Sprintf("; waiting for a decision on %s (%s)", ev.DeferredToolUse.Name, ev.DeferredToolUse.ID)
		}
		return []string{line}
	}
	return nil
}

// toolInput shows a tool's input on one line: a command, path or URL when the tool has one,
// else the input as JSON.
func toolInput(tool string, input json.RawMessage) string {
	var fields map[string]any
	if json.Unmarshal(input, &fields) == nil {
		for _, key := range []string{"command", "file_path", "path", "url", "pattern"} {
			if v, ok := fields[key].(string); ok {
				return oneLine(v, inputShown)
			}
		}
	}
	return oneLine(string(input), inputShown)
}

// resultText is a tool result's content as text: a string, or its text blocks.
func resultText(content json.RawMessage) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s
	}
	var blocks []block
	if json.Unmarshal(content, &blocks) == nil {
		var parts []string
		for _, b := range blocks {
			if b.Type == "text" {
				parts = append(parts, b.Text)
			}
		}
		return strings.Join(parts, " ")
	}
	return string(content)
}

// oneLine puts s on one line of at most max runes, saying when it was shortened.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + fmt.Sprintf("… (%d more characters)", len(r)-max)
	}
	return s
}

// writeLine writes s, cleaned, as a line of the job's log.
func writeLine(out io.Writer, s string) {
	fmt.Fprintln(out, engines.Clean(s))
}
