package messages

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// post sends body to path and returns the answer's body.
func post(t *testing.T, s *Server, path, body string) string {
	t.Helper()
	resp, err := http.Post(s.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// eventTypes lists the types of a stream's events, checking each event's name matches the
// type in its data.
func eventTypes(t *testing.T, stream string) (types []string, data []map[string]any) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(stream))
	name := ""
	for sc.Scan() {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, "event: "); ok {
			name = n
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			var v map[string]any
			if err := json.Unmarshal([]byte(d), &v); err != nil {
				t.Fatalf("data %q: %v", d, err)
			}
			if v["type"] != name {
				t.Errorf("event %q carries type %v", name, v["type"])
			}
			types, data = append(types, name), append(data, v)
		}
	}
	return types, data
}

const withTools = `{"stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_scripted_0","content":[{"type":"text","text":"hi"}],"is_error":true}]}]}`

func TestMainConversationPlaysTheScriptInOrder(t *testing.T) {
	s := Start(t, ToolUse("Bash", `{"command":"echo hi"}`), Text("done"))

	types, data := eventTypes(t, post(t, s, "/v1/messages", withTools))
	want := []string{"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
	if !reflect.DeepEqual(types, want) {
		t.Fatalf("events %v, want %v", types, want)
	}
	block := data[1]["content_block"].(map[string]any)
	if block["type"] != "tool_use" || block["id"] != "toolu_scripted_0" || block["name"] != "Bash" {
		t.Errorf("tool block %v", block)
	}
	if d := data[2]["delta"].(map[string]any); d["partial_json"] != `{"command":"echo hi"}` {
		t.Errorf("input delta %v", d)
	}
	if d := data[4]["delta"].(map[string]any); d["stop_reason"] != "tool_use" {
		t.Errorf("message delta %v", d)
	}

	// A request without tools is a side request: it gets the side answer, no step.
	_, side := eventTypes(t, post(t, s, "/v1/messages", `{"stream":true,"messages":[]}`))
	if d := side[2]["delta"].(map[string]any); d["text"] != SideAnswer {
		t.Errorf("side answer %v", d)
	}
	if got := post(t, s, "/v1/messages/count_tokens", `{}`); strings.TrimSpace(got) != `{"input_tokens":10}` {
		t.Errorf("count_tokens %s", got)
	}

	_, data = eventTypes(t, post(t, s, "/v1/messages", withTools))
	if d := data[2]["delta"].(map[string]any); d["text"] != "done" {
		t.Errorf("second step %v", d)
	}
	if d := data[4]["delta"].(map[string]any); d["stop_reason"] != "end_turn" {
		t.Errorf("message delta %v", d)
	}
	if s.Played() != 2 || s.Overrun() != 0 {
		t.Errorf("played %d, overrun %d; want 2, 0", s.Played(), s.Overrun())
	}

	_, data = eventTypes(t, post(t, s, "/v1/messages", withTools))
	if d := data[2]["delta"].(map[string]any); d["text"] != OutOfScript || s.Overrun() != 1 {
		t.Errorf("after the script: %v, overrun %d", d, s.Overrun())
	}

	got, ok := s.ToolResult("toolu_scripted_0")
	if want := (ToolResult{ToolUseID: "toolu_scripted_0", Text: "hi", IsError: true}); !ok || got != want {
		t.Errorf("tool result %+v, %v; want %+v", got, ok, want)
	}
	if n := len(s.Requests()); n != 5 {
		t.Errorf("%d requests recorded, want 5", n)
	}
}

func TestNonStreamingRequestGetsAWholeMessage(t *testing.T) {
	s := Start(t, Text("whole"))
	var m map[string]any
	if err := json.Unmarshal([]byte(post(t, s, "/v1/messages", `{"tools":[{"name":"Bash"}],"messages":[]}`)), &m); err != nil {
		t.Fatal(err)
	}
	want := []any{map[string]any{"type": "text", "text": "whole"}}
	if !reflect.DeepEqual(m["content"], want) || m["stop_reason"] != "end_turn" {
		t.Errorf("message %v", m)
	}
}
