package responses

import (
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// post sends a streaming request of the given kind (empty: no metadata header) and returns the
// status and body.
func post(t *testing.T, s *Server, kind, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.BaseURL()+"/responses", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if kind != "" {
		req.Header.Set("X-Codex-Turn-Metadata", `{"request_kind":"`+kind+`"}`)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServerPlaysTheScriptToMainRequestsOnly(t *testing.T) {
	s := Start(t, Call("mcp__mindroom.test__echo", map[string]any{"a": 1}), Say("done"))
	const body = `{"stream":true,"input":[{"type":"function_call_output","call_id":"call_1","output":"echoed"}]}`

	status, stream := post(t, s, "turn", body)
	if status != http.StatusOK || !strings.Contains(stream, `"call_id":"call_1"`) || !strings.Contains(stream, `"namespace":"mcp__mindroom"`) ||
		!strings.Contains(stream, `"name":"test__echo"`) || !strings.Contains(stream, `"arguments":"{\"a\":1}"`) {
		t.Errorf("first step: %d\n%s", status, stream)
	}
	if status, stream = post(t, s, "title", body); status != http.StatusOK || !strings.Contains(stream, `"delta":"ok"`) {
		t.Errorf("side request: %d\n%s", status, stream)
	}
	if status, stream = post(t, s, "", body); status != http.StatusOK || !strings.Contains(stream, `"delta":"done"`) ||
		!strings.Contains(stream, `"usage":{"input_tokens":100,"input_tokens_details":{"cached_tokens":0},"output_tokens":10`) {
		t.Errorf("second step: %d\n%s", status, stream)
	}
	if status, _ = post(t, s, "turn", body); status != http.StatusBadRequest {
		t.Errorf("a request after the script: %d, want 400", status)
	}
	if want := []string{"main request 4 after the script's 2 steps"}; !reflect.DeepEqual(s.Unexpected(), want) {
		t.Errorf("unexpected %q, want %q", s.Unexpected(), want)
	}
	var main []bool
	for _, r := range s.Requests() {
		main = append(main, r.Main)
	}
	if !reflect.DeepEqual(main, []bool{true, false, true}) || s.Remaining() != 0 || len(s.MainRequests()) != 2 {
		t.Errorf("recorded main %v, %d steps left", main, s.Remaining())
	}
	if out, ok := s.Requests()[0].CallOutput("call_1"); !ok || out != "echoed" {
		t.Errorf("call output %q, %v", out, ok)
	}
}
