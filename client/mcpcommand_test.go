package client

import (
	"os/exec"
	"strings"
	"testing"
)

// The command line of `mindroom-agent mcp` is read here; package client/mcp tests the serving.
func TestMCPCommandLine(t *testing.T) {
	for name, args := range map[string][]string{
		"PageSizeZeroIsRefused":            {"mcp", "--page-size", "0"},
		"PageSizeOverOneThousandIsRefused": {"mcp", "--page-size=1001"},
		"PageSizeMustBeAnInteger":          {"mcp", "--page-size", "ten"},
		"ArgumentsAreRefused":              {"mcp", "serve"},
		"UnknownOptionIsRefused":           {"mcp", "--timeout", "3"},
	} {
		t.Run(name+"WithExitTwoAndTheErrorOnStderrOnly", func(t *testing.T) {
			o := runCLI(t, nil, "", args...)
			if o.code != ExitInvalid || o.stdout != "" || o.stderr == "" {
				t.Fatalf("code %d stdout %q stderr %q", o.code, o.stdout, o.stderr)
			}
		})
	}
	t.Run("HelpNeedsNoEnvironment", func(t *testing.T) {
		for _, args := range [][]string{{"mcp", "--help"}, {"mcp", "-h"}, {"help", "mcp"}, {"mcp", "help"}, {"mcp", "--page-size", "x", "--help"}} {
			o := runCLI(t, nil, "", args...)
			o.wantCode(t, ExitCompleted)
			for _, want := range []string{"NAME\n", "SYNOPSIS\n", "TOOL NAMES\n", "LISTING\n", "CALLS\n", "ERRORS\n", "EXAMPLES\n", "--page-size N", "permission_prompt"} {
				if !strings.Contains(o.stdout, want) {
					t.Fatalf("%v: help lacks %q", args, want)
				}
			}
		}
	})
	t.Run("HelpSaysWhichRevisionsAndErrorsAreServed", func(t *testing.T) {
		help := strings.Join(strings.Fields(mcpHelp()), " ")
		for _, want := range []string{
			"MCP 2026-07-28, stateless: a request whose _meta names the revision (io.modelcontextprotocol/protocolVersion) and the client's capabilities (io.modelcontextprotocol/clientCapabilities) needs no initialize",
			`its result carries "resultType":"complete"`,
			"server/discover answers the revisions served (2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05)",
			"else with 2025-11-25 (also when asked for 2026-07-28, which has no handshake)",
			"-32022 for a request whose _meta names a revision this server does not serve (data.supported lists the revisions served, data.requested the one asked for)",
			"served: initialize, ping, tools/list and tools/call before 2026-07-28, and tasks/get and tasks/result in 2025-11-25; server/discover, tools/list, tools/call, tasks/get, tasks/update and tasks/cancel in 2026-07-28",
			"-32021 for a task method from a request that does not declare the Tasks extension",
			"tasks/list and tasks/cancel are not served there (-32601)",
			`"Failed to retrieve task: Task not found"`,
		} {
			if !strings.Contains(help, want) {
				t.Errorf("help lacks %q", want)
			}
		}
	})
	t.Run("TopHelpListsMcp", func(t *testing.T) {
		o := runCLI(t, nil, "", "--help")
		if !strings.Contains(o.stdout, "mindroom-agent mcp [--page-size N]") || !strings.Contains(o.stdout, "\n    mcp ") {
			t.Fatalf("top help does not list mcp:\n%s", o.stdout)
		}
	})
	t.Run("HelpLinesFitTheWidth", func(t *testing.T) {
		for _, line := range strings.Split(mcpHelp(), "\n") {
			if len(line) > helpWidth && !strings.HasPrefix(line, "    mindroom-agent ") && !strings.HasPrefix(line, "    printf ") &&
				!strings.HasPrefix(line, "    echo ") && !strings.HasPrefix(line, "    claude ") {
				t.Errorf("line over %d columns: %q", helpWidth, line)
			}
		}
	})
	t.Run("CompletionCompletesMcpAndItsOptions", func(t *testing.T) {
		bash, err := exec.LookPath("bash")
		if err != nil {
			t.Skip("bash is not installed")
		}
		script := bashCompletion() + `
complete_line() { COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); _mindroom_agent; echo "${COMPREPLY[*]}"; }
complete_line mindroom-agent mc
complete_line mindroom-agent mcp --p
complete_line mindroom-agent help m
`
		out, err := exec.Command(bash, "--norc", "--noprofile", "-c", script).CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, out)
		}
		if want := "mcp\n--page-size\nmcp\n"; string(out) != want {
			t.Fatalf("completions %q, want %q", out, want)
		}
		if z := zshCompletion(); !strings.Contains(z, "--page-size") || !strings.Contains(z, " mcp ") {
			t.Fatalf("zsh completion lacks mcp")
		}
	})
	t.Run("WithoutAServerItExitsFourWithTheErrorOnStderrOnly", func(t *testing.T) {
		o := runCLI(t, nil, "", "mcp")
		if o.code != ExitUnavailable || o.stdout != "" || !strings.Contains(o.stderr, "mcp is not available") {
			t.Fatalf("code %d stdout %q stderr %q", o.code, o.stdout, o.stderr)
		}
	})
}
