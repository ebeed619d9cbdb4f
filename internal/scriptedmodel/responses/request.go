package responses

import (
	"encoding/json"
	"net/http"
)

// Request is one POST /v1/responses the server answered.
type Request struct {
	Header http.Header
	// Body is the request's JSON, as sent.
	Body []byte
	// Main reports whether it was a request of the main conversation, which consumed a step.
	Main bool
	// Input is the request's input items.
	Input []map[string]any
	// Tools is the request's tools.
	Tools []map[string]any
}

// ToolNames lists the names of the request's function tools, namespaced ones as
// NAMESPACE.NAME.
func (r Request) ToolNames() []string {
	var names []string
	var add func(prefix string, tools []map[string]any)
	add = func(prefix string, tools []map[string]any) {
		for _, t := range tools {
			name, _ := t["name"].(string)
			if t["type"] == "namespace" {
				var inner []map[string]any
				b, _ := json.Marshal(t["tools"])
				_ = json.Unmarshal(b, &inner)
				add(prefix+name+".", inner)
				continue
			}
			if name != "" {
				names = append(names, prefix+name)
			}
		}
	}
	add("", r.Tools)
	return names
}

// CallOutput is the output the request carries for the tool call callID (a
// function_call_output item), and whether there is one.
func (r Request) CallOutput(callID string) (string, bool) {
	for _, item := range r.Input {
		if item["type"] != "function_call_output" || item["call_id"] != callID {
			continue
		}
		switch out := item["output"].(type) {
		case string:
			return out, true
		default: // content items
			b, _ := json.Marshal(out)
			return string(b), true
		}
	}
	return "", false
}
