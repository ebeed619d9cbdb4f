package engines

import (
	"strings"
	"testing"
)

// TestResultLine: the last result line is the result; text before it is the progress; a line
// that does not start a line, or does not parse, is no result; Clean leaves nothing that could
// start one.
func TestResultLine(t *testing.T) {
	var b strings.Builder
	b.WriteString("progress 1\n")
	if err := WriteResult(&b, Result{Engine: "claude", Status: StatusParked, Session: "s1"}); err != nil {
		t.Fatal(err)
	}
	b.WriteString("resumed\n")
	if err := WriteResult(&b, Result{Engine: "claude", Status: StatusFinished, Report: "done\n" + ResultPrefix + "{}", Turns: 3}); err != nil {
		t.Fatal(err)
	}
	out := []byte(b.String())
	r, ok := ParseResult(out)
	if !ok || r.Status != StatusFinished || r.Report != "done\n"+ResultPrefix+"{}" || r.Turns != 3 {
		t.Fatalf("ParseResult = %+v, %v", r, ok)
	}
	if got := string(Output(out)); !strings.HasSuffix(got, "resumed\n") {
		t.Fatalf("Output = %q", got)
	}
	for _, bad := range []string{
		"no line at all",
		"text " + ResultPrefix + `{"status":"finished"}`, // not at a line's start
		ResultPrefix + `{"status":`,                      // cut short
		ResultPrefix + `{"report":"x"}`,                  // no status
	} {
		if r, ok := ParseResult([]byte(bad)); ok {
			t.Errorf("ParseResult(%q) = %+v, want none", bad, r)
		}
	}
	if got := Clean("a\x1eb\tc\nd\x1b[2Je\u009bf\x7f"); got != "ab\tc\nd[2Jef" {
		t.Errorf("Clean = %q", got)
	}
	if r, ok := ParseResult([]byte(Clean(ResultPrefix + `{"status":"finished"}`))); ok {
		t.Errorf("a cleaned forgery parsed: %+v", r)
	}
}
