package e2e

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A walkthrough is a document's terminal transcripts that a test types and compares. A code
// block belongs to it when the line before its opening fence (blank lines aside) is
//
//	<!-- walkthrough: TERMINAL -->            typed into TERMINAL; each command must exit 0
//	<!-- walkthrough: TERMINAL until "TEXT" -->  typed, then awaited until the output holds TEXT
//
// Inside such a block a line starting with "$ " or "(turncli) $ " is what a person types (the
// second inside `make shell`), and the lines after it are what the terminal prints, compared
// line by line: "…" in a line matches any run of characters, and a line that is only "…"
// matches any number of lines. A command that does not return (a daemon) is the one command of
// an "until" block. Terminals are separate Bash sessions in the same directory, created in the
// order the document first names them.

// wtStep is one typed command of a walkthrough and what the document says it prints.
type wtStep struct {
	terminal string
	input    string
	until    string   // non-empty: wait for this text instead of the command's end
	want     []string // expected output lines (only without until)
	line     int      // the input's line in the document, for messages
}

var (
	wtMarker = regexp.MustCompile(`^<!-- walkthrough: ([a-z][a-z0-9-]*)(?: until "([^"]+)")? -->$`)
	wtPrompt = regexp.MustCompile(`^(?:\(turncli\) )?\$ `)
)

// parseWalkthrough reads the walkthrough's steps from a markdown document.
func parseWalkthrough(doc io.Reader) ([]wtStep, error) {
	var steps []wtStep
	sc := bufio.NewScanner(doc)
	n := 0
	next := func() (string, int, bool) {
		ok := sc.Scan()
		n++
		return sc.Text(), n, ok
	}
	for {
		line, _, ok := next()
		if !ok {
			break
		}
		if strings.HasPrefix(line, "<!-- walkthrough") {
			m := wtMarker.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("line %d: malformed walkthrough marker %q", n, line)
			}
			block, err := wtBlock(next, n)
			if err != nil {
				return nil, err
			}
			if m[2] != "" && (len(block) != 1 || len(block[0].want) != 0) {
				return nil, fmt.Errorf("line %d: an until block holds one command and no output", n)
			}
			for i := range block {
				block[i].terminal, block[i].until = m[1], m[2]
			}
			steps = append(steps, block...)
		}
	}
	return steps, sc.Err()
}

// wtBlock reads the fenced block that follows a marker at line marker.
func wtBlock(next func() (string, int, bool), marker int) ([]wtStep, error) {
	var line string
	var at int
	var ok bool
	for line, at, ok = next(); ok && strings.TrimSpace(line) == ""; line, at, ok = next() {
	}
	if !ok || line != "```sh" {
		return nil, fmt.Errorf("line %d: a walkthrough marker must precede a ```sh block", marker)
	}
	var steps []wtStep
	for {
		line, at, ok = next()
		switch {
		case !ok:
			return nil, fmt.Errorf("line %d: the walkthrough block does not end", marker)
		case line == "```":
			if len(steps) == 0 {
				return nil, fmt.Errorf("line %d: the walkthrough block types nothing", marker)
			}
			return steps, nil
		case wtPrompt.MatchString(line):
			steps = append(steps, wtStep{input: wtPrompt.ReplaceAllString(line, ""), line: at})
		case len(steps) == 0:
			return nil, fmt.Errorf("line %d: output %q before any command", at, line)
		default:
			steps[len(steps)-1].want = append(steps[len(steps)-1].want, line)
		}
	}
}

// wtLineMatches reports whether got matches the document's line want, whose "…" match any run
// of characters.
func wtLineMatches(want, got string) bool {
	parts := strings.Split(want, "…")
	if len(parts) == 1 {
		return want == got
	}
	if !strings.HasPrefix(got, parts[0]) {
		return false
	}
	got = got[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(got, p)
		if i < 0 {
			return false
		}
		got = got[i+len(p):]
	}
	return strings.HasSuffix(got, last)
}

// wtLinesMatch reports whether got matches want line by line, a want line of only "…" matching
// any number of lines.
func wtLinesMatch(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if want[0] == "…" {
		for skip := 0; skip <= len(got); skip++ {
			if wtLinesMatch(want[1:], got[skip:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && wtLineMatches(want[0], got[0]) && wtLinesMatch(want[1:], got[1:])
}

func TestWalkthroughTranscriptsAreReadAndCompared(t *testing.T) {
	t.Run("StepsComeFromMarkedBlocksOnly", func(t *testing.T) {
		doc := "# t\n```sh\n$ not typed\n```\n<!-- walkthrough: one until \"ready\" -->\n\n```sh\n$ serve\n```\n" +
			"text\n<!-- walkthrough: two -->\n```sh\n$ a\nout 1\n(turncli) $ b\n$ c\nout 2\nout 3\n```\n"
		steps, err := parseWalkthrough(strings.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range steps {
			got = append(got, fmt.Sprintf("%d %s %q until %q: %q", s.line, s.terminal, s.input, s.until, s.want))
		}
		want := []string{`8 one "serve" until "ready": []`, `13 two "a" until "": ["out 1"]`,
			`15 two "b" until "": []`, `16 two "c" until "": ["out 2" "out 3"]`}
		if !slices.Equal(got, want) {
			t.Errorf("steps\n got %q\nwant %q", got, want)
		}
	})
	for name, doc := range map[string]string{
		"MarkerWithoutBlock":   "<!-- walkthrough: one -->\ntext\n",
		"OutputBeforeCommand":  "<!-- walkthrough: one -->\n```sh\nout\n$ a\n```\n",
		"UnendedBlock":         "<!-- walkthrough: one -->\n```sh\n$ a\n",
		"EmptyBlock":           "<!-- walkthrough: one -->\n```sh\n```\n",
		"UntilWithTwoCommands": "<!-- walkthrough: one until \"x\" -->\n```sh\n$ a\n$ b\n```\n",
		"UntilWithOutput":      "<!-- walkthrough: one until \"x\" -->\n```sh\n$ a\nout\n```\n",
		"MalformedMarker":      "<!-- walkthrough one -->\n```sh\n$ a\n```\n",
	} {
		t.Run("Refuses"+name, func(t *testing.T) {
			if _, err := parseWalkthrough(strings.NewReader(doc)); err == nil {
				t.Error("accepted")
			}
		})
	}
	for _, tc := range []struct {
		want, got []string
		match     bool
	}{
		{[]string{"exit 3"}, []string{"exit 3"}, true},
		{[]string{"exit 3"}, []string{"exit 0"}, false},
		{[]string{"exit 3"}, []string{"exit 3", "more"}, false},
		{[]string{`{"id":"…","status":"completed"}`}, []string{`{"id":"a1","status":"completed"}`}, true},
		{[]string{`{"id":"…","status":"completed"}`}, []string{`{"id":"a1","status":"failed"}`}, false},
		{[]string{"response …, window shell-… — try"}, []string{"response r1, window shell-9 — try"}, true},
		{[]string{"…", "last"}, []string{"a", "b", "last"}, true},
		{[]string{"…", "last"}, []string{"last"}, true},
		{[]string{"…", "last"}, []string{"a", "last", "b"}, false},
		{[]string{"a…"}, []string{"b"}, false},
		{[]string{"…a…a"}, []string{"a"}, false},
	} {
		if got := wtLinesMatch(tc.want, tc.got); got != tc.match {
			t.Errorf("wtLinesMatch(%q, %q) = %v", tc.want, tc.got, got)
		}
	}
}
