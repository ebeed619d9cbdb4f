package client

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompletionScripts(t *testing.T) {
	for _, shell := range []string{"bash", "zsh"} {
		t.Run(shell, func(t *testing.T) {
			o := runCLI(t, nil, "", "completion", shell)
			o.wantCode(t, ExitCompleted)
			for _, g := range groups {
				for _, c := range g.commands {
					if !strings.Contains(o.stdout, g.name+" "+c.name) {
						t.Errorf("script does not complete %s %s", g.name, c.name)
					}
					for _, f := range c.flags {
						if !strings.Contains(o.stdout, "--"+f.name) {
							t.Errorf("script does not complete --%s", f.name)
						}
					}
				}
			}
			path, err := exec.LookPath(shell)
			if err != nil {
				t.Skipf("%s is not installed; syntax not checked", shell)
			}
			file := filepath.Join(t.TempDir(), "completion."+shell)
			if err := os.WriteFile(file, []byte(o.stdout), 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(path, "-n", file).CombinedOutput(); err != nil {
				t.Fatalf("%s -n: %v\n%s", shell, err, out)
			}
		})
	}
}

func TestBashCompletionCompletes(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	script := bashCompletion() + `
complete_line() { COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); _mindroom_agent; echo "${COMPREPLY[*]}"; }
complete_line mindroom-agent to
complete_line mindroom-agent tools c
complete_line mindroom-agent tools call k.f --js
`
	out, err := exec.Command(bash, "--norc", "--noprofile", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	if want := "tools\ncall\n--json --json-file --json-stdin\n"; string(out) != want {
		t.Fatalf("completions %q, want %q", out, want)
	}
}
