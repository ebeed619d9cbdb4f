package codex

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/turncli/turncli/client"
	"github.com/turncli/turncli/client/engines"
)

// These tests run the driver in this process against small scripts named codex, for what the
// real CLI will not do on demand: die, answer nonsense, show its environment.

// runWithCLI runs Run with a codex script of the given body first on PATH and the
// environment env (plus PATH, the brief and the engine home); it returns the exit code, the
// output, the result and the engine home.
func runWithCLI(t *testing.T, script string, env map[string]string) (code int, stdout, stderr string, res engines.Result, home string) {
	t.Helper()
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "codex"), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	home = t.TempDir()
	vars := map[string]string{"PATH": bin + ":/usr/bin:/bin", engines.TaskEnv: "Do it.", engines.HomeEnv: home}
	for k, v := range env {
		vars[k] = v
	}
	getenv := func(k string) string { return vars[k] }
	var out, errOut bytes.Buffer
	code = Run(context.Background(), client.NewAgent(client.AgentConfig{Getenv: getenv}), nil, strings.NewReader(""), &out, &errOut, getenv)
	res, ok := engines.ParseResult(out.Bytes())
	if !ok {
		t.Fatalf("no result line in:\n%s", out.String())
	}
	return code, out.String(), errOut.String(), res, home
}

func TestCLIThatDiesFailsTheRunWithTheEndOfItsStandardError(t *testing.T) {
	code, _, stderr, res, _ := runWithCLI(t, "read line\nprintf 'first\\nboom: \\033[31mno model\\n' >&2\nexit 3\n", nil)
	want := engines.Result{Engine: "codex", Status: engines.StatusFailed, IsError: true, Errors: []string{
		"initialize: the app-server closed its output",
		"codex app-server: exit status 3",
		"standard error of codex app-server ends with:\nfirst\nboom: [31mno model",
	}}
	if code != 0 || !reflect.DeepEqual(res, want) {
		t.Errorf("exit %d, result %+v; want 0, %+v", code, res, want)
	}
	if stderr != "first\nboom: [31mno model\n" {
		t.Errorf("standard error %q, want the CLI's, cleaned", stderr)
	}
}

func TestOutputThatIsNotJSONRPCFailsTheRun(t *testing.T) {
	_, _, _, res, _ := runWithCLI(t, "read line\necho 'not json'\nread line\n", nil)
	want := []string{"initialize: a line of the app-server's output is not JSON-RPC: invalid character 'o' in literal null (expecting 'u')"}
	if res.Status != engines.StatusFailed || !res.IsError || len(res.Errors) < 1 || !reflect.DeepEqual(res.Errors[:1], want) {
		t.Errorf("result %+v, want failed with %q first", res, want)
	}
}

func TestCLIGetsAnExplicitEnvironmentAndAHomeOfTheJobs(t *testing.T) {
	_, _, _, _, home := runWithCLI(t, "env > \"$CODEX_HOME/env.txt\"\nread line\n", map[string]string{
		"HOME": "/home/agent", "OPENAI_API_KEY": "sk-test", "MINDROOM_AGENT_CLI_TOKEN": "grant",
		"MINDROOM_AGENT_CLI_URL": "http://127.0.0.1:1", "MINDROOM_AGENT_CLI_WINDOW": "w1",
		"AWS_SECRET_ACCESS_KEY": "not-for-codex", "GITHUB_TOKEN": "not-for-codex",
	})
	codexHome := filepath.Join(home, "codex")
	b, err := os.ReadFile(filepath.Join(codexHome, "env.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, kv := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		name, _, _ := strings.Cut(kv, "=")
		if name != "PWD" && name != "SHLVL" && name != "_" { // the shell's own
			got = append(got, name)
		}
	}
	slices.Sort(got)
	want := []string{"CODEX_HOME", "HOME", "MINDROOM_AGENT_CLI_TOKEN", "MINDROOM_AGENT_CLI_URL", "MINDROOM_AGENT_CLI_WINDOW", "OPENAI_API_KEY", "PATH"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the CLI got %q, want %q", got, want)
	}
	if !strings.Contains(string(b), "CODEX_HOME="+codexHome+"\n") {
		t.Errorf("CODEX_HOME is not %s:\n%s", codexHome, b)
	}
	for path, mode := range map[string]os.FileMode{codexHome: 0o700 | os.ModeDir, filepath.Join(codexHome, "config.toml"): 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode() != mode {
			t.Errorf("%s: %v, %v; want mode %v", path, fi.Mode(), err, mode)
		}
	}
}

func TestRunWithoutABriefFailsAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name, unset, why string
	}{
		{"NoBrief", engines.TaskEnv, "MINDROOM_AGENT_TASK is empty: there is no brief"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, _, res, _ := runWithCLI(t, "exit 0\n", map[string]string{tc.unset: ""})
			want := engines.Result{Engine: "codex", Status: engines.StatusFailed, IsError: true, Errors: []string{tc.why}}
			if code != client.ExitUnavailable || !reflect.DeepEqual(res, want) {
				t.Errorf("exit %d, result %+v; want %d, %+v", code, res, client.ExitUnavailable, want)
			}
		})
	}
}

func TestCodexNotOnPathSaysHowToInstallIt(t *testing.T) {
	getenv := func(k string) string {
		return map[string]string{"PATH": t.TempDir(), engines.TaskEnv: "Do it.", engines.HomeEnv: t.TempDir()}[k]
	}
	var out bytes.Buffer
	code := Run(context.Background(), client.NewAgent(client.AgentConfig{Getenv: getenv}), nil, nil, &out, &out, getenv)
	res, _ := engines.ParseResult(out.Bytes())
	want := []string{"the codex CLI is not on PATH: install it with npm i -g @openai/codex@0.169.0 (Node.js 18 or newer)"}
	if code != client.ExitUnavailable || !reflect.DeepEqual(res.Errors, want) {
		t.Errorf("exit %d, errors %q; want %d, %q", code, res.Errors, client.ExitUnavailable, want)
	}
}
