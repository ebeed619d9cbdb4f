package responses

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// event is one server-sent event of a streamed response.
type event struct {
	name string
	data map[string]any
}

// events is the stream that answers with step: the response is created, its one output item
// is added (with the text as one delta for a message), done, and the response completes with
// its usage.
func events(responseID, itemID string, step Step) []event {
	usage := step.Usage
	if usage == (Usage{}) {
		usage = DefaultUsage
	}
	var item map[string]any
	var deltas []event
	if step.Call != "" {
		item = map[string]any{
			"type": "function_call", "id": itemID, "call_id": step.CallID,
			"name": step.Call, "arguments": step.Arguments, "status": "completed",
		}
		if namespace, name, ok := strings.Cut(step.Call, "."); ok {
			item["namespace"], item["name"] = namespace, name
		}
	} else {
		item = map[string]any{
			"type": "message", "id": itemID, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": step.Text, "annotations": []any{}}},
		}
		deltas = append(deltas, event{"response.output_text.delta", map[string]any{
			"item_id": itemID, "output_index": 0, "content_index": 0, "delta": step.Text,
		}})
	}
	added := map[string]any{}
	for k, v := range item {
		added[k] = v
	}
	if step.Call == "" {
		added["content"] = []any{}
		added["status"] = "in_progress"
	}
	evs := []event{
		{"response.created", map[string]any{"response": map[string]any{"id": responseID, "status": "in_progress"}}},
		{"response.output_item.added", map[string]any{"output_index": 0, "item": added}},
	}
	evs = append(evs, deltas...)
	return append(evs,
		event{"response.output_item.done", map[string]any{"output_index": 0, "item": item}},
		event{"response.completed", map[string]any{"response": map[string]any{
			"id": responseID, "status": "completed",
			"usage": map[string]any{
				"input_tokens": usage.InputTokens, "output_tokens": usage.OutputTokens,
				"total_tokens":          usage.InputTokens + usage.OutputTokens,
				"input_tokens_details":  map[string]any{"cached_tokens": 0},
				"output_tokens_details": map[string]any{"reasoning_tokens": 0},
			},
		}}},
	)
}

func writeEvent(w http.ResponseWriter, ev event) {
	data := map[string]any{"type": ev.name}
	for k, v := range ev.data {
		data[k] = v
	}
	b, _ := json.Marshal(data)
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.name, b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
