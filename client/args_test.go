package client

import (
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestSplitTool(t *testing.T) {
	tests := []struct {
		name              string
		pos               []string
		toolkit, function string
		rest              []string
		errCode           int
		errFragment       string
	}{
		{name: "DottedSplitsOnTheLastDot", pos: []string{"a.b.c"}, toolkit: "a.b", function: "c", rest: []string{}},
		{name: "TwoWords", pos: []string{"weather", "forecast"}, toolkit: "weather", function: "forecast", rest: []string{}},
		{name: "TwoWordsKeepDotsInToolkit", pos: []string{"a.b", "c"}, toolkit: "a.b", function: "c", rest: []string{}},
		{name: "DottedWithTrailingJSON", pos: []string{"weather.forecast", `{"city":"Lisbon"}`}, toolkit: "weather", function: "forecast", rest: []string{`{"city":"Lisbon"}`}},
		{name: "DottedWithTrailingArray", pos: []string{"a.b", `[]`}, toolkit: "a", function: "b", rest: []string{`[]`}},
		{name: "TwoWordsWithTrailingJSON", pos: []string{"weather", "forecast", `{}`}, toolkit: "weather", function: "forecast", rest: []string{`{}`}},
		{name: "MissingFunctionNamesSearch", pos: []string{"slack"}, errCode: ExitInvalid, errFragment: "mindroom-agent tools search slack"},
		{name: "EmptyFunctionNamesSearch", pos: []string{"slack."}, errCode: ExitInvalid, errFragment: "mindroom-agent tools search slack"},
		{name: "JSONInsteadOfFunctionNamesSearch", pos: []string{"slack", `{}`}, errCode: ExitInvalid, errFragment: "mindroom-agent tools search slack"},
		{name: "FunctionStartingWithADigitIsAFunction", pos: []string{"github", "2fa_setup"}, toolkit: "github", function: "2fa_setup", rest: []string{}},
		{name: "MissingToolkit", pos: []string{".send"}, errCode: ExitInvalid, errFragment: "missing toolkit"},
		{name: "Nothing", pos: nil, errCode: ExitInvalid, errFragment: "missing TOOLKIT"},
		{name: "TooMany", pos: []string{"a", "b", "{}", "{}"}, errCode: ExitInvalid, errFragment: "too many"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			toolkit, function, rest, err := splitTool(tt.pos, true)
			if tt.errFragment != "" {
				var e *cliError
				if !errors.As(err, &e) || e.code != tt.errCode || !strings.Contains(e.msg, tt.errFragment) {
					t.Fatalf("err = %v, want exit %d containing %q", err, tt.errCode, tt.errFragment)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if toolkit != tt.toolkit || function != tt.function || !reflect.DeepEqual(rest, tt.rest) {
				t.Fatalf("got %q %q %q, want %q %q %q", toolkit, function, rest, tt.toolkit, tt.function, tt.rest)
			}
		})
	}
}

func TestParseArgs(t *testing.T) {
	specs := []flagSpec{{name: "limit", arg: "N"}, {name: "json-stdin"}}
	tests := []struct {
		name   string
		args   []string
		pos    []string
		values map[string]string
		err    string
	}{
		{name: "FlagsAfterPositionals", args: []string{"q", "--limit", "5"}, pos: []string{"q"}, values: map[string]string{"limit": "5"}},
		{name: "FlagsBeforePositionals", args: []string{"--limit=5", "q"}, pos: []string{"q"}, values: map[string]string{"limit": "5"}},
		{name: "ValueMayStartWithDash", args: []string{"--limit", "-5"}, values: map[string]string{"limit": "-5"}},
		{name: "BooleanFlag", args: []string{"--json-stdin", "q"}, pos: []string{"q"}, values: map[string]string{"json-stdin": ""}},
		{name: "DoubleDashEndsOptions", args: []string{"--", "--limit", "-x"}, pos: []string{"--limit", "-x"}, values: map[string]string{}},
		{name: "UnknownLongFlag", args: []string{"--bogus"}, err: "unknown option --bogus"},
		{name: "UnknownShortFlag", args: []string{"-x"}, err: "unknown option -x"},
		{name: "MissingValue", args: []string{"--limit"}, err: "needs a value"},
		{name: "BooleanWithValue", args: []string{"--json-stdin=yes"}, err: "takes no value"},
		{name: "GivenTwice", args: []string{"--limit", "1", "--limit=2"}, err: "more than once"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := parseArgs(tt.args, specs)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p.positionals, tt.pos) || !reflect.DeepEqual(p.values, tt.values) {
				t.Fatalf("got %q %v, want %q %v", p.positionals, p.values, tt.pos, tt.values)
			}
		})
	}
}

func TestParseTimeout(t *testing.T) {
	good := map[string]time.Duration{"30": 30 * time.Second, "0": 0, "0.5": 500 * time.Millisecond, ".25": 250 * time.Millisecond, "2.": 2 * time.Second}
	for s, want := range good {
		if got, err := parseTimeout(s); err != nil || got != want {
			t.Errorf("parseTimeout(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"-1", "-0.5", "", ".", "abc", "1e3", "NaN", "inf", "+1", "0x10", "1_0", " 1"} {
		if _, err := parseTimeout(s); err == nil {
			t.Errorf("parseTimeout(%q) succeeded", s)
		}
	}
}

func TestParseUUID(t *testing.T) {
	const canonical = "0b7e2a8c-3c1f-4b7e-9a51-5d0c2f3e4a6b"
	for _, s := range []string{
		canonical,
		strings.ToUpper(canonical),
		"{" + canonical + "}",
		"urn:uuid:" + canonical,
		"URN:UUID:" + canonical,
		strings.ReplaceAll(canonical, "-", ""),
	} {
		if got, ok := parseUUID(s); !ok || got != canonical {
			t.Errorf("parseUUID(%q) = %q, %v", s, got, ok)
		}
	}
	for _, s := range []string{"", "x", canonical[:35], canonical + "0", "0b7e2a8c3c1f-4b7e-9a51-5d0c2f3e4a6b0", strings.Replace(canonical, "b", "g", 1), "{" + canonical} {
		if _, ok := parseUUID(s); ok {
			t.Errorf("parseUUID(%q) accepted", s)
		}
	}
}

func TestNewCallIDIsVersion4(t *testing.T) {
	seenIDs := map[string]bool{}
	for range 100 {
		id, err := newCallID(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if canonical, ok := parseUUID(id); !ok || canonical != id || id[14] != '4' || !strings.ContainsRune("89ab", rune(id[19])) {
			t.Fatalf("bad v4 UUID %q", id)
		}
		seenIDs[id] = true
	}
	if len(seenIDs) != 100 {
		t.Fatalf("ids repeat")
	}
}

func TestStrictCallInput(t *testing.T) {
	object := func(size int) string { // a JSON object of exactly size bytes
		return `{"a":"` + strings.Repeat("x", size-8) + `"}`
	}
	reject := map[string]string{
		"Array":         `[]`,
		"String":        `"x"`,
		"DuplicateKey":  `{"a":1,"a":2}`,
		"NestedDupKey":  `{"a":{"b":1,"b":1}}`,
		"NaN":           `{"a":NaN}`,
		"Overflow":      `{"a":1e999}`,
		"Truncated":     `{`,
		"TrailingData":  `{} {}`,
		"ByteOrderMark": "\ufeff{}",
		"BadUTF8":       "{\"a\":\"\xff\"}",
		"Over64KiB":     object(65537),
		"Empty":         ``,
	}
	for name, input := range reject {
		t.Run("Rejects"+name, func(t *testing.T) {
			o := runCLI(t, nil, "", "tools", "call", "a.b", "--json", input)
			m := o.wantError(t, ExitInvalid, "call input")
			if _, ok := parseUUID(m["call_id"].(string)); !ok {
				t.Fatalf("no call id in %v", m)
			}
		})
	}
	accept := map[string]string{"Empty": `{}`, "Exactly64KiB": object(65536), "Nested": ` {"a":[1,1.0,{"b":null}]} `}
	for name, input := range accept {
		t.Run("Accepts"+name, func(t *testing.T) {
			if _, err := parseCallInput([]byte(input)); err != nil {
				t.Fatal(err)
			}
			// Valid input gets as far as the environment, which is empty here.
			runCLI(t, nil, "", "tools", "call", "a.b", "--json", input).wantError(t, ExitUnavailable, envURL)
		})
	}
}

func TestCallInputSourcesAreExclusive(t *testing.T) {
	file := filepath.Join(t.TempDir(), "args.json")
	if err := os.WriteFile(file, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	sources := map[string][]string{
		"trailing":   {`{}`},
		"json":       {"--json", `{}`},
		"json-file":  {"--json-file", file},
		"json-stdin": {"--json-stdin"},
	}
	for a, argsA := range sources {
		for b, argsB := range sources {
			if a >= b {
				continue
			}
			t.Run(a+"And"+b, func(t *testing.T) {
				args := append(append([]string{"tools", "call", "k.f"}, argsA...), argsB...)
				runCLI(t, nil, "{}", args...).wantError(t, ExitInvalid, "only once")
			})
		}
	}
	t.Run("MissingFileIsInvalidInput", func(t *testing.T) {
		runCLI(t, nil, "", "tools", "call", "k.f", "--json-file", file+".missing").wantError(t, ExitInvalid, "--json-file")
	})
	t.Run("OversizedStdin", func(t *testing.T) {
		runCLI(t, nil, strings.Repeat(" ", 65537), "tools", "call", "k.f", "--json-stdin").wantError(t, ExitInvalid, "64 KiB")
	})
}

func TestUsageErrors(t *testing.T) {
	tests := map[string][]string{
		"NoCommand":           {},
		"UnknownGroup":        {"toolz"},
		"UnknownTopOption":    {"--verbose"},
		"MissingSubcommand":   {"tools"},
		"UnknownSubcommand":   {"tools", "run"},
		"UnknownFlag":         {"tools", "list", "--bogus"},
		"NegativeTimeout":     {"tools", "call", "k.f", "--timeout", "-1"},
		"NonNumberTimeout":    {"calls", "wait", testCallID, "--timeout", "soon"},
		"NonIntegerLimit":     {"tools", "list", "--limit", "1.5"},
		"BadCallID":           {"tools", "call", "k.f", "--call-id", "not-a-uuid"},
		"BadCallsGetID":       {"calls", "get", "42"},
		"ExtraPositional":     {"tools", "list", "extra"},
		"SearchWithoutQuery":  {"tools", "search"},
		"DescribeWithoutName": {"tools", "describe", "weather"},
		"ContextReadTwoNames": {"context", "read", "a", "b"},
		"UnknownShell":        {"completion", "fish"},
		"UnknownHelpTopic":    {"help", "nope"},
	}
	for name, args := range tests {
		t.Run(name, func(t *testing.T) {
			runCLI(t, nil, "", args...).wantError(t, ExitInvalid, "")
		})
	}
}

func TestHelpAtEveryLevelNeedsNoEnvironment(t *testing.T) {
	helps := [][]string{{"--help"}, {"-h"}, {"help"}, {"help", "completion"}, {"completion", "--help"}}
	for _, g := range groups {
		helps = append(helps, []string{g.name, "--help"}, []string{g.name, "-h"}, []string{g.name, "help"}, []string{"help", g.name})
		for _, c := range g.commands {
			helps = append(helps,
				[]string{g.name, c.name, "--help"},
				[]string{g.name, c.name, "-h"},
				[]string{g.name, c.name, "--bogus", "x", "--help"},
				[]string{"help", g.name, c.name},
				[]string{g.name, "help", c.name})
		}
	}
	for _, args := range helps {
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			o := runCLI(t, nil, "", args...)
			o.wantCode(t, ExitCompleted)
			for _, section := range []string{"NAME\n", "SYNOPSIS\n", "EXAMPLES\n"} {
				if !strings.Contains(o.stdout, section) {
					t.Fatalf("help lacks %q:\n%s", section, o.stdout)
				}
			}
			if o.stderr != "" {
				t.Fatalf("stderr %q", o.stderr)
			}
		})
	}
	t.Run("CommandHelpHasOptionsAndDescription", func(t *testing.T) {
		o := runCLI(t, nil, "", "tools", "call", "--help")
		for _, want := range []string{"DESCRIPTION\n", "OPTIONS\n", "--json-stdin", "--call-id UUID", "--timeout SECONDS", "EXIT STATUS"} {
			if !strings.Contains(o.stdout, want) {
				t.Fatalf("help lacks %q", want)
			}
		}
	})
	t.Run("ThroughMainWithNoEnvironment", func(t *testing.T) {
		var stdout, stderr strings.Builder
		code := Main(t.Context(), []string{"--help"}, strings.NewReader(""), &stdout, &stderr, func(string) string { return "" })
		if code != 0 || !strings.Contains(stdout.String(), "mindroom-agent tools call") {
			t.Fatalf("code %d, stdout %q", code, stdout.String())
		}
	})
}

func TestHelpLinesFitTheWidth(t *testing.T) {
	text := topHelp() + groupHelp(groups[0]) + commandHelp(groups[0], groups[0].commands[3])
	for _, line := range strings.Split(text, "\n") {
		if len(line) > helpWidth && !strings.HasPrefix(line, "    mindroom-agent ") && !strings.Contains(line, "{\"") && !strings.HasPrefix(line, "    jq ") {
			t.Errorf("line over %d columns: %q", helpWidth, line)
		}
	}
}
