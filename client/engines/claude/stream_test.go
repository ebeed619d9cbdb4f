package claude

import (
	"encoding/json"
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

func TestProgressLines(t *testing.T) {
	long := strings.Repeat("x", resultShown+7)
	for _, tc := range []struct {
		name  string
		event string
		want  []string
	}{
		{"ToolUseShowsTheCommandOnOneLine",
			`{"type":"assistant","message":{"content":[{"type":"text","text":" Let me look. "},{"type":"tool_use","name":"Bash","input":{"command":"ls\n  -la","description":"list"}}]}}`,
			[]string{"Let me look.", "> Bash ls -la"}},
		{"ToolUseWithoutAKnownFieldShowsItsInput",
			`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"mcp__mindroom__test__echo","input":{"word":"hi"}}]}}`,
			[]string{`> mcp__mindroom__test__echo {"word":"hi"}`}},
		{"LongResultIsShortenedSayingSo",
			`{"type":"user","message":{"content":[{"type":"tool_result","content":"` + long + `"}]}}`,
			[]string{"< result: " + strings.Repeat("x", resultShown) + "… (7 more characters)"}},
		{"ErrorResultOfBlocks",
			`{"type":"user","message":{"content":[{"type":"tool_result","is_error":true,"content":[{"type":"text","text":"no"},{"type":"text","text":"such file"}]}]}}`,
			[]string{"< error: no such file"}},
		{"UserTextIsTheBriefAndNotShown",
			`{"type":"user","message":{"content":[{"type":"text","text":"the brief"}]}}`, nil},
		{"PermissionDenied",
			`{"type":"system","subtype":"permission_denied","tool_name":"Bash","message":"Denied\nautomatically."}`,
			[]string{"denied Bash: Denied automatically."}},
		{"ResultWithErrors",
			`{"type":"result","subtype":"error_max_turns","num_turns":2,"total_cost_usd":0.00012,"errors":["Reached maximum number of turns (1)"]}`,
			[]string{"error_max_turns after 2 turns, $0.0001; Reached maximum number of turns (1)"}},
		{"DeferredResult",
			`{"type":"result","subtype":"success","num_turns":1,"total_cost_usd":0,"stop_reason":"tool_deferred","deferred_tool_use":{"id":"toolu_1","name":"Bash"}}`,
			[]string{"success after 1 turns, $0.0000; waiting for a decision on Bash (toolu_1)"}},
		{"UnknownEventIsNotShown", `{"type":"rate_limit_event"}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ev event
			if err := json.Unmarshal([]byte(tc.event), &ev); err != nil {
				t.Fatal(err)
			}
			if got := progressLines(ev); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestReadEventsShowsLinesThatAreNotEventsCleaned(t *testing.T) {
	var out strings.Builder
	end := readEvents(strings.NewReader("plain \x1b[1mnote\n{\"type\":\"result\",\"subtype\":\"success\",\"session_id\":\"s1\",\"result\":\"ok\"}\n"), &out)
	if end.err != nil || end.result == nil || end.result.Result != "ok" || end.session != "s1" {
		t.Fatalf("read %+v", end)
	}
	if want := "plain [1mnote\nsuccess after 0 turns, $0.0000\n"; out.String() != want {
		t.Errorf("shown %q, want %q", out.String(), want)
	}
}

func TestACLIThatEndsWithoutAResultIsDescribedByItsExitAndStandardError(t *testing.T) {
	cmd := exec.Command("sh", "-c", `printf 'first\n' >&2; printf 'cannot \033[31mstart\n' >&2; exit 3`)
	errTail := &tail{max: 14}
	cmd.Stderr = errTail
	got := noResult(cmd.Run(), nil, errTail.String())
	want := []string{"the claude CLI ended with exit status 3 without a result", "its standard error ends: ot [31mstart"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
