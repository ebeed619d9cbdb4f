package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/turncli/turncli/internal/testenv"
)

// namedCommands are the mindroom-agent commands a message names, in `backquotes`.
var namedCommands = regexp.MustCompile("`(mindroom-agent [^`]+)`")

// TestDeferredToolkitFunctionsAreFoundByFollowingTheMessages starts where a new user starts,
// with a toolkit name, and runs only commands the previous output named, with the real
// mindroom-agent in real Bash against a primary with the test deferred toolkit: search shows
// the deferred item naming `tools describe test_deferred`; that describe loads the toolkit
// (once) and names its functions and the next describe and search; search then shows them.
// Listing and searching never load it.
func TestDeferredToolkitFunctionsAreFoundByFollowingTheMessages(t *testing.T) {
	env := testenv.Start(t)
	id := env.Open(t)
	step := 0
	run := func(t *testing.T, command string) (int, string) {
		t.Helper()
		step++
		r := env.RunBash(t, id, fmt.Sprintf("step-%d", step), command)
		return int(r.Result.GetExitCode()), r.Stdout
	}
	loads := func() int { return env.Primary.Internals().TestDeferred.Loads() }
	// next returns the named command that starts with prefix.
	next := func(t *testing.T, text, prefix string) string {
		t.Helper()
		for _, m := range namedCommands.FindAllStringSubmatch(text, -1) {
			if strings.HasPrefix(m[1], prefix) {
				return m[1]
			}
		}
		t.Fatalf("no command starting %q is named in %s", prefix, text)
		return ""
	}

	// A call that names no function points at search (the contract's exit-2 message).
	code, out := run(t, "mindroom-agent tools call test_deferred")
	if code != 2 {
		t.Fatalf("call without a function: exit %d %s", code, out)
	}
	search := next(t, out, "mindroom-agent tools search test_deferred")

	code, out = run(t, search)
	if code != 0 || strings.Count(out, `"toolkit":"test_deferred"`) != 1 || !strings.Contains(out, `"deferred":true`) || loads() != 0 {
		t.Fatalf("%s before loading: exit %d %s (loads %d)", search, code, out, loads())
	}
	describeToolkit := next(t, out, "mindroom-agent tools describe")
	if describeToolkit != "mindroom-agent tools describe test_deferred" {
		t.Fatalf("the deferred item names %q", describeToolkit)
	}

	code, out = run(t, describeToolkit)
	msg := jsonLine(t, out)["error"].(string)
	if code != 2 || !strings.Contains(msg, "whose functions are ping, add") || loads() != 1 {
		t.Fatalf("%s: exit %d %s (loads %d)", describeToolkit, code, out, loads())
	}
	if again := next(t, msg, "mindroom-agent tools search "); again != search {
		t.Errorf("the describe names %q, want the search it has just made useful, %q", again, search)
	}
	describe := next(t, msg, "mindroom-agent tools describe test_deferred.")

	code, out = run(t, search)
	if code != 0 || !strings.Contains(out, `"function":"ping","toolkit":"test_deferred"`) ||
		!strings.Contains(out, `"function":"add","toolkit":"test_deferred"`) || strings.Contains(out, `"deferred":true`) {
		t.Fatalf("%s after loading: exit %d %s", search, code, out)
	}

	code, out = run(t, describe)
	if code != 0 || !strings.Contains(out, `"input_schema":`) || !strings.Contains(out, `"toolkit":"test_deferred"`) {
		t.Fatalf("%s: exit %d %s", describe, code, out)
	}
	code, out = run(t, `mindroom-agent tools call test_deferred.add '{"a":2,"b":3}'`)
	if code != 0 || !strings.Contains(out, `"outcome":{"sum":5}`) {
		t.Fatalf("call: exit %d %s", code, out)
	}
	if n := loads(); n != 1 {
		t.Errorf("the toolkit loaded %d times, want once", n)
	}
}

// TestDescribingAToolkitWithoutAFunctionStaysAUsageError: without an Agent CLI environment the
// describe sends nothing and says only what the contract says; an unknown toolkit is named as
// the server names it.
func TestDescribingAToolkitWithoutAFunctionStaysAUsageError(t *testing.T) {
	env := testenv.Start(t)
	id := env.Open(t)
	s := newStepFiles(t)
	env.RunBash(t, id, "bash-1", s.Prelude()+
		`step empty env -i "$(command -v mindroom-agent)" tools describe test_deferred`+"\n"+
		`step unknown mindroom-agent tools describe no_such_toolkit`+"\n")
	empty := s.Get(t, "empty")
	if msg := expectError(t, empty.code, empty.stdout, empty.stderr, 2, ""); msg !=
		"missing function name of toolkit \"test_deferred\"; run `mindroom-agent tools search test_deferred` to see its functions" {
		t.Errorf("with no environment: %q", msg)
	}
	if n := env.Primary.Internals().TestDeferred.Loads(); n != 0 {
		t.Errorf("a describe with no environment loaded the toolkit %d times", n)
	}
	unknown := s.Get(t, "unknown")
	msg := expectError(t, unknown.code, unknown.stdout, unknown.stderr, 2, "")
	for _, want := range []string{`Unknown toolkit "no_such_toolkit"; available toolkits:`, "test_deferred", "`mindroom-agent tools search no_such_toolkit`"} {
		if !strings.Contains(msg, want) {
			t.Errorf("unknown toolkit message lacks %q: %s", want, msg)
		}
	}
}
