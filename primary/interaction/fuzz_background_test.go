package interaction

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/turncli/turncli/internal/canonjson"
)

// checkLabel checks label's verdict: absent is "", a string is accepted trimmed when it has at
// most 120 characters, anything else is refused.
func checkLabel(t *testing.T, data []byte, args map[string]any) {
	t.Helper()
	got, err := label(args)
	raw, isString, present := stringField(args, "label")
	want := !present || isString && utf8.RuneCountInString(strings.TrimSpace(raw)) <= 120
	switch {
	case err != nil && want:
		t.Fatalf("arguments %.200q: label refused: %v", data, err)
	case err != nil:
		checkRefusal(t, data, err)
	case !want:
		t.Fatalf("arguments %.200q: label %.80q accepted", data, got)
	case got != strings.TrimSpace(raw):
		t.Fatalf("arguments %.200q: label %q, want the trimmed argument", data, got)
	}
}

// FuzzRunInBackgroundArgs checks run_in_background's arguments: command trimmed non-empty and
// at most 2000 characters, label at most 120.
func FuzzRunInBackgroundArgs(f *testing.F) {
	for _, s := range withSizes("command", MaxCommandChars, `,"label":"build"`) {
		f.Add([]byte(s))
	}
	for _, s := range withSizes("label", MaxLabelChars, `,"command":"make test"`) {
		f.Add([]byte(s))
	}
	for _, s := range []string{`{}`, `{"command":null}`, `{"command":1}`, `{"command":["ls"]}`, `{"command":"ls","label":7}`,
		`{"command":"\u0000"}`, `{"command":"  \u2028\u00a0 "}`, `{"command":"echo 😀","label":""}`, `{"command":"ls","extra":true}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		args, ok := fuzzArgs(data)
		if !ok {
			return
		}
		checkLabel(t, data, args)
		got, err := commandArg(args)
		raw, isString, _ := stringField(args, "command")
		want := isString && trimmedChars(strings.TrimSpace(raw), 1, 2000)
		switch {
		case err != nil && want:
			t.Fatalf("arguments %.200q: command refused: %v", data, err)
		case err != nil:
			checkRefusal(t, data, err)
			return
		case !want:
			t.Fatalf("arguments %.200q: command %.80q accepted", data, got)
		case got != strings.TrimSpace(raw):
			t.Fatalf("arguments %.200q: command %q, want the trimmed argument", data, got)
		}
		again, err := commandArg(map[string]any{"command": got})
		if err != nil || again != got {
			t.Fatalf("accepted command %q is not accepted again as itself: %q, %v", got, again, err)
		}
	})
}

// FuzzRunAgentInBackgroundArgs checks run_agent_in_background's arguments: task trimmed
// non-empty and at most MaxTaskBytes bytes, label at most 120 characters.
func FuzzRunAgentInBackgroundArgs(f *testing.F) {
	for _, n := range []int{0, 1, MaxTaskBytes, MaxTaskBytes + 1} {
		task, _ := canonjson.Marshal(strings.Repeat("t", n))
		f.Add([]byte(`{"task":` + string(task) + `}`))
	}
	// Two-byte characters: 50 000 of them are exactly the limit.
	for _, n := range []int{MaxTaskBytes / 2, MaxTaskBytes/2 + 1} {
		task, _ := canonjson.Marshal(" " + strings.Repeat("é", n) + " ")
		f.Add([]byte(`{"task":` + string(task) + `,"label":"review"}`))
	}
	for _, s := range withSizes("label", MaxLabelChars, `,"task":"Summarise the logs"`) {
		f.Add([]byte(s))
	}
	for _, s := range []string{`{}`, `{"task":null}`, `{"task":false}`, `{"task":{"a":1}}`, `{"task":"\t\n"}`,
		`{"task":"a\u0000b"}`, `{"task":"Review PR 12","label":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		args, ok := fuzzArgs(data)
		if !ok {
			return
		}
		checkLabel(t, data, args)
		got, err := taskArg(args)
		raw, isString, _ := stringField(args, "task")
		trimmed := strings.TrimSpace(raw)
		want := isString && trimmed != "" && len(trimmed) <= MaxTaskBytes
		switch {
		case err != nil && want:
			t.Fatalf("arguments %.200q: task refused: %v", data, err)
		case err != nil:
			checkRefusal(t, data, err)
			return
		case !want:
			t.Fatalf("arguments %.200q: task of %d bytes accepted", data, len(got))
		case got != trimmed:
			t.Fatalf("arguments %.200q: task is not the trimmed argument", data)
		}
		again, err := taskArg(map[string]any{"task": got})
		if err != nil || again != got {
			t.Fatalf("accepted task %.80q is not accepted again as itself: %v", got, err)
		}
	})
}
