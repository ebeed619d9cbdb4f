package e2e

import (
	"strings"
	"testing"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
)

// TestMindroomAgentInShells checks what the built mindroom-agent does in the shells a
// response gives it: with no environment at all, and nested inside a tool call.
func TestMindroomAgentInShells(t *testing.T) {
	env := testenv.Start(t)

	t.Run("HelpOfEveryGroupWorksWithAnEmptyEnvironment", func(t *testing.T) {
		topics := map[string]string{
			"top":     "--help",
			"tools":   "tools --help",
			"call":    "tools call --help",
			"calls":   "calls --help",
			"context": "context --help",
		}
		s := newStepFiles(t)
		cmd := s.Prelude() + `bin=$(command -v mindroom-agent)` + "\n"
		for name, args := range topics {
			cmd += `step ` + name + ` env -i "$bin" ` + args + "\n"
		}
		id := env.Open(t)
		env.RunBash(t, id, "bash-1", cmd)
		for name, args := range topics {
			got := s.Get(t, name)
			if got.code != 0 || got.stderr != "" || !strings.Contains(got.stdout, "mindroom-agent") {
				t.Errorf("env -i mindroom-agent %s: exit %d, stdout %q, stderr %q", args, got.code, got.stdout, got.stderr)
			}
		}
	})

	// The environment is checked only when a request is about to be sent, so a usage mistake
	// is exit 2 even where the environment is missing.
	t.Run("CallWithoutAFunctionExitsTwoAndNamesToolsSearch", func(t *testing.T) {
		s := newStepFiles(t)
		id := env.Open(t)
		env.RunBash(t, id, "bash-1", s.Prelude()+
			`step shell mindroom-agent tools call test --call-id `+agentCallA+"\n"+
			`step empty env -i "$(command -v mindroom-agent)" tools call test --call-id `+agentCallA+"\n")
		want := "missing function name of toolkit \"test\"; run `mindroom-agent tools search test` to see its functions"
		for _, name := range []string{"shell", "empty"} {
			got := s.Get(t, name)
			if msg := expectError(t, got.code, got.stdout, got.stderr, 2, agentCallA); msg != want {
				t.Errorf("%s: message = %q, want %q", name, msg, want)
			}
		}
	})

	t.Run("NestedShellCallJoinsTheOuterWindow", func(t *testing.T) {
		id := env.Open(t)
		run := env.RunBash(t, id, "bash-outer",
			`mindroom-agent tools call shell.run_shell_command '{"command":"mindroom-agent tools call test.echo {} --call-id `+agentCallB+`"}' --call-id `+agentCallA)
		if code := run.Result.GetExitCode(); code != 0 {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, run.Stdout, run.Stderr)
		}
		outer := jsonLine(t, run.Stdout)
		if outer["status"] != "completed" || outer["parent_bash_call_id"] != "bash-outer" {
			t.Errorf("outer receipt = %s", run.Stdout)
		}
		if inner := receiptLine(agentCallB, "echo", "{}", "bash-outer", "completed"); !strings.Contains(run.Stdout, jsonStringBody(inner+"\n")) {
			t.Errorf("the nested command did not print the inner receipt %s; outer receipt %s", inner, run.Stdout)
		}
		rs := run.Result.GetReceipts()
		if len(rs) != 2 {
			t.Fatalf("window receipts = %v, want the outer and the inner call", rs)
		}
		for i, want := range []struct{ callID, toolkit, function string }{
			{agentCallA, "shell", "run_shell_command"},
			{agentCallB, "test", "echo"},
		} {
			r := rs[i]
			if r.GetCallId() != want.callID || r.GetToolkit() != want.toolkit || r.GetFunction() != want.function ||
				r.GetParentBashCallId() != "bash-outer" || r.GetStatus() != responsev1.CallStatus_CALL_STATUS_COMPLETED {
				t.Errorf("receipt %d = %v, want %s.%s %s of bash-outer, completed", i, r, want.toolkit, want.function, want.callID)
			}
		}
	})
}

// jsonString is s as a JSON string literal without its quotes, as canonical JSON writes it
// inside a larger value (only ", \ and control characters are escaped).
func jsonStringBody(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return r.Replace(s)
}
