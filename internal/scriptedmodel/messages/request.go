package messages

import (
	"encoding/json"
	"strings"
	"time"
)

// Request is one request the server received.
type Request struct {
	Method, Path string
	// Main: a request of the main conversation, which consumed a step (or overran).
	Main bool
	// Body is the decoded JSON body; Raw the body as sent.
	Body map[string]any
	Raw  []byte
	// Received is when the request arrived, Answered when its answer was written in full
	// (measurements of an engine's overhead read them).
	Received, Answered time.Time
}

// offersTools reports whether the request offers the model tools: the main conversation
// does; a title, topic or quota request does not.
func (r Request) offersTools() bool {
	tools, _ := r.Body["tools"].([]any)
	return len(tools) > 0
}

// ToolResult is a tool_result block the engine sent the model.
type ToolResult struct {
	ToolUseID string
	// Text is the result's text: its string content, or its text blocks joined.
	Text    string
	IsError bool
}

// ToolResults lists the tool results in the request's messages, in order.
func (r Request) ToolResults() []ToolResult {
	var out []ToolResult
	msgs, _ := r.Body["messages"].([]any)
	for _, m := range msgs {
		blocks, _ := m.(map[string]any)["content"].([]any)
		for _, b := range blocks {
			block, _ := b.(map[string]any)
			if block["type"] != "tool_result" {
				continue
			}
			id, _ := block["tool_use_id"].(string)
			isErr, _ := block["is_error"].(bool)
			out = append(out, ToolResult{ToolUseID: id, Text: blockText(block["content"]), IsError: isErr})
		}
	}
	return out
}

// blockText is the text of a tool result's content: a string, or a list of blocks.
func blockText(c any) string {
	switch c := c.(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, b := range c {
			if block, _ := b.(map[string]any); block["type"] == "text" {
				text, _ := block["text"].(string)
				parts = append(parts, text)
			}
		}
		return strings.Join(parts, "\n")
	}
	b, _ := json.Marshal(c)
	return string(b)
}

// ToolResult returns the first tool result for toolUseID sent in any main-conversation
// request so far.
func (s *Server) ToolResult(toolUseID string) (ToolResult, bool) {
	for _, r := range s.Requests() {
		if !r.Main {
			continue
		}
		for _, tr := range r.ToolResults() {
			if tr.ToolUseID == toolUseID {
				return tr, true
			}
		}
	}
	return ToolResult{}, false
}
