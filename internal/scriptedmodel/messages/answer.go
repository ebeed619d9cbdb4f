package messages

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// The usage every answer reports: the engine prices it, so a run has a cost.
const (
	inputTokens  = 10
	outputTokens = 5
)

// model is the model every answer names.
const model = "claude-scripted"

// content is the content block of a step, as a whole message carries it.
func content(step Step, index int) map[string]any {
	if step.Tool == "" {
		return map[string]any{"type": "text", "text": step.Text}
	}
	var input any = map[string]any{}
	if len(step.Input) > 0 {
		input = step.Input
	}
	return map[string]any{"type": "tool_use", "id": ToolUseID(index), "name": step.Tool, "input": input}
}

func stopReason(step Step) string {
	if step.Tool != "" {
		return "tool_use"
	}
	return "end_turn"
}

// message is the non-streaming answer.
func message(id int, step Step, index int) map[string]any {
	return map[string]any{
		"id": fmt.Sprintf("msg_scripted_%d", id), "type": "message", "role": "assistant", "model": model,
		"content": []any{content(step, index)}, "stop_reason": stopReason(step), "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": inputTokens, "output_tokens": outputTokens},
	}
}

// streamMessage streams the answer as the API's server-sent events: the message starts, its
// one content block starts, gets its text or its input as a delta, and stops, then the
// message gets its stop reason and usage and stops.
func streamMessage(w http.ResponseWriter, id int, step Step, index int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	start := message(id, step, index)
	start["content"], start["stop_reason"] = []any{}, nil
	start["usage"] = map[string]any{"input_tokens": inputTokens, "output_tokens": 1}
	event(w, "message_start", map[string]any{"message": start})

	block, delta := content(step, index), map[string]any{}
	if step.Tool == "" {
		block["text"] = ""
		delta = map[string]any{"type": "text_delta", "text": step.Text}
	} else {
		input := string(step.Input)
		if input == "" {
			input = "{}"
		}
		block["input"] = map[string]any{}
		delta = map[string]any{"type": "input_json_delta", "partial_json": input}
	}
	event(w, "content_block_start", map[string]any{"index": 0, "content_block": block})
	event(w, "content_block_delta", map[string]any{"index": 0, "delta": delta})
	event(w, "content_block_stop", map[string]any{"index": 0})
	event(w, "message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": stopReason(step), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": outputTokens},
	})
	event(w, "message_stop", map[string]any{})
}

// event writes one server-sent event whose data is fields with their type.
func event(w http.ResponseWriter, name string, fields map[string]any) {
	fields["type"] = name
	data, _ := json.Marshal(fields)
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
