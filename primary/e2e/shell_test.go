package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
)

func TestLocalShells(t *testing.T) {
	t.Setenv("MINDROOM_RUNTIME_TOKEN_PROBE", "primary-secret-value")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "primary-secret-value")
	env := testenv.Start(t)
	id := env.Open(t)

	t.Run("EnvironmentIsTheAllowlistThreeVariablesAndPathOnly", func(t *testing.T) {
		run := env.RunBash(t, id, "env", `env`)
		if strings.Contains(run.Stdout, "primary-secret-value") {
			t.Fatalf("a primary variable reached the shell:\n%s", run.Stdout)
		}
		vars := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(run.Stdout), "\n") {
			k, v, _ := strings.Cut(line, "=")
			vars[k] = v
		}
		for _, k := range []string{"MINDROOM_AGENT_CLI_URL", "MINDROOM_AGENT_CLI_TOKEN", "MINDROOM_AGENT_CLI_WINDOW"} {
			if vars[k] == "" {
				t.Errorf("%s missing", k)
			}
		}
		if vars["MINDROOM_AGENT_CLI_URL"] != env.AgentCLIURL {
			t.Errorf("URL = %q, want %q", vars["MINDROOM_AGENT_CLI_URL"], env.AgentCLIURL)
		}
		if first := strings.Split(vars["PATH"], ":")[0]; first != filepath.Join(env.StateDir, "agent_cli_bin") {
			t.Errorf("first PATH entry = %q", first)
		}
		allowed := map[string]bool{"HOME": true, "LANG": true, "PATH": true, "PWD": true, "SHLVL": true, "_": true,
			"MINDROOM_AGENT_CLI_URL": true, "MINDROOM_AGENT_CLI_TOKEN": true, "MINDROOM_AGENT_CLI_WINDOW": true}
		for k := range vars {
			if !allowed[k] {
				t.Errorf("unexpected variable %s in a local shell", k)
			}
		}
	})

	t.Run("CommandStartsInTheAgentsWorkspace", func(t *testing.T) {
		run := env.RunBash(t, id, "pwd", `pwd`)
		if got, want := strings.TrimSpace(run.Stdout), filepath.Join(env.StateDir, "workspaces", "tester"); got != want {
			t.Errorf("pwd = %q, want %q", got, want)
		}
	})

	t.Run("LauncherIsPrivateAloneAndRewrittenWhenTampered", func(t *testing.T) {
		dir := filepath.Join(env.StateDir, "agent_cli_bin")
		launcher := filepath.Join(dir, "mindroom-agent")
		if err := os.WriteFile(launcher, []byte("#!/bin/sh\necho hijacked\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "intruder"), nil, 0o755); err != nil {
			t.Fatal(err)
		}
		run := env.RunBash(t, id, "launcher", `mindroom-agent tools call test.echo '{"ok":1}'`)
		if run.Result.GetExitCode() != 0 || strings.Contains(run.Stdout, "hijacked") {
			t.Fatalf("launcher was not restored: exit %d, %q", run.Result.GetExitCode(), run.Stdout)
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 || entries[0].Name() != "mindroom-agent" {
			t.Errorf("agent_cli_bin holds %v", entries)
		}
		for path, want := range map[string]os.FileMode{dir: 0o755, launcher: 0o755} {
			fi, err := os.Stat(path)
			if err != nil || fi.Mode().Perm() != want {
				t.Errorf("%s mode = %v, want %v", path, fi.Mode().Perm(), want)
			}
		}
	})

	t.Run("ExitCodeIsData", func(t *testing.T) {
		run := env.RunBash(t, id, "exit42", `echo out; echo err >&2; exit 42`)
		if run.Result.GetExitCode() != 42 || run.Stdout != "out\n" || run.Stderr != "err\n" || run.Result.GetError() != "" {
			t.Errorf("got exit %d stdout %q stderr %q error %q", run.Result.GetExitCode(), run.Stdout, run.Stderr, run.Result.GetError())
		}
	})

	t.Run("TimeoutSendsTermThenKill", func(t *testing.T) {
		// Long enough for bash to set its trap on a loaded machine.
		const timeout = 2 * time.Second
		run := env.RunBashContext(context.Background(), t, id, "timeout", `trap 'echo term; exit 7' TERM; echo started; while :; do sleep 0.05; done`, timeout)
		if !run.Result.GetTimedOut() || run.Result.GetExitCode() != 7 || !strings.Contains(run.Stdout, "term") {
			t.Errorf("result %v stdout %q", run.Result, run.Stdout)
		}
		run = env.RunBashContext(context.Background(), t, id, "timeout-kill", `trap '' TERM; echo started; while :; do sleep 0.05; done`, timeout)
		if !run.Result.GetTimedOut() || run.Result.GetExitCode() != 137 {
			t.Errorf("a command ignoring TERM: result %v", run.Result)
		}
	})

	t.Run("DuplicateBashCallIDIsRefused", func(t *testing.T) {
		stream, err := env.Runtime.RunBash(context.Background(), &responsev1.RunBashRequest{ResponseId: id, BashCallId: "env", Command: "true"})
		if err == nil {
			_, err = stream.Recv()
		}
		if status.Code(err) != codes.Aborted {
			t.Errorf("err = %v, want Aborted", err)
		}
	})
}

func TestClosingResponseStopsItsCommandsAndRevokesFirst(t *testing.T) {
	env := testenv.Start(t)
	id := env.Open(t)
	done := make(chan testenv.BashRun, 1)
	go func() {
		done <- env.RunBash(t, id, "long", `mindroom-agent tools call test.gate '{"name":"never"}' --timeout 0; sleep 600`)
	}()
	<-env.Primary.Internals().TestToolkit.Started("never")
	if _, err := env.Runtime.CloseResponse(context.Background(), &responsev1.CloseResponseRequest{ResponseId: id}); err != nil {
		t.Fatal(err)
	}
	run := <-done
	if !run.Result.GetCancelled() {
		t.Errorf("command was not cancelled: %v", run.Result)
	}
	if _, ok := env.Primary.Internals().Responses.Get(id); ok {
		t.Error("closed response is still live")
	}
	if _, err := env.Runtime.OpenWindow(context.Background(), &responsev1.OpenWindowRequest{ResponseId: id, BashCallId: "x"}); status.Code(err) != codes.NotFound {
		t.Errorf("OpenWindow on a closed response: %v", err)
	}
}

func TestResponseServiceCredentials(t *testing.T) {
	env := testenv.Start(t)
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer wrong")
	// The testenv client adds the right token too; two values are refused as well.
	_, err := env.Runtime.OpenResponse(ctx, &responsev1.OpenResponseRequest{AgentName: "a"})
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("two credentials: %v", err)
	}

	t.Run("GrantIsNotARuntimeCredential", func(t *testing.T) {
		id := env.Open(t)
		win, err := env.Runtime.OpenWindow(context.Background(), &responsev1.OpenWindowRequest{ResponseId: id, BashCallId: "w"})
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodPost, env.HTTPURL+"/v1/responses", strings.NewReader(`{"agent_name":"x"}`))
		req.Header.Set("Authorization", "Bearer "+win.GetEnvironment()["MINDROOM_AGENT_CLI_TOKEN"])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("status = %d, want 401", resp.StatusCode)
		}
	})

	t.Run("RuntimeCredentialIsNotAGrant", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, env.AgentCLIURL+"/api/agent-cli/operations", strings.NewReader(`{"operation":"tools.list"}`))
		req.Header.Set("Authorization", "Bearer "+env.Primary.RuntimeToken())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || string(body) != `{"detail":"Agent CLI authority is unavailable"}` {
			t.Errorf("got %d %s", resp.StatusCode, body)
		}
	})
	http.DefaultClient.CloseIdleConnections()
}

func TestRunBashOverREST(t *testing.T) {
	env := testenv.Start(t)
	rest := func(path, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, env.HTTPURL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+env.Primary.RuntimeToken())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	defer http.DefaultClient.CloseIdleConnections()
	resp := rest("/v1/responses", `{"agent_name":"rest","shell_mode":"SHELL_MODE_MINIMAL"}`)
	var opened struct {
		ResponseID string `json:"response_id"`
	}
	json.NewDecoder(resp.Body).Decode(&opened)
	resp.Body.Close()
	if opened.ResponseID == "" {
		t.Fatalf("OpenResponse over REST: status %d", resp.StatusCode)
	}
	defer func() { rest("/v1/responses/"+opened.ResponseID+":close", `{}`).Body.Close() }()

	resp = rest("/v1/responses/"+opened.ResponseID+"/bash", `{"bash_call_id":"rest-1","command":"`+strings.ReplaceAll(strings.ReplaceAll(curlCall, `\`, `\\`), `"`, `\"`)+`"}`)
	defer resp.Body.Close()
	var final map[string]any
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Result map[string]any `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("stream line %q: %v", sc.Text(), err)
		}
		if r, ok := line.Result["result"].(map[string]any); ok {
			final = r
		}
	}
	receipts, _ := final["receipts"].([]any)
	if len(receipts) != 1 {
		t.Fatalf("final message = %v", final)
	}
	if r := receipts[0].(map[string]any); r["status"] != "CALL_STATUS_COMPLETED" || r["parent_bash_call_id"] != "rest-1" {
		t.Errorf("receipt = %v", r)
	}
}

var _ = primary.EndpointsFile

func TestLauncherIsRestoredWhateverAShellPutsInItsPlace(t *testing.T) {
	env := testenv.Start(t)
	id := env.Open(t)
	bin := filepath.Join(env.StateDir, "agent_cli_bin")
	victim := t.TempDir()
	if err := os.WriteFile(filepath.Join(victim, "keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, tamper string }{
		{"SymlinkedDirectoryIsReplacedNotFollowed", `rm -rf "$BIN" && ln -s "$VICTIM" "$BIN"`},
		{"DirectoryAtTheLauncherPathIsReplaced", `rm -f "$BIN/mindroom-agent" && mkdir -p "$BIN/mindroom-agent/sub"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := env.RunBash(t, id, "tamper-"+tc.name, `BIN='`+bin+`' VICTIM='`+victim+`'; `+tc.tamper)
			if run.Result.GetExitCode() != 0 {
				t.Fatalf("tamper: exit %d %s", run.Result.GetExitCode(), run.Stderr)
			}
			run = env.RunBash(t, id, "after-"+tc.name, `mindroom-agent tools call test.echo '{"ok":true}'`)
			if run.Result.GetExitCode() != 0 {
				t.Fatalf("the next command could not use mindroom-agent: exit %d error %q stderr %q", run.Result.GetExitCode(), run.Result.GetError(), run.Stderr)
			}
			if fi, err := os.Lstat(bin); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o755 {
				t.Errorf("agent_cli_bin is not a private directory: %v %v", fi, err)
			}
			if entries, _ := os.ReadDir(victim); len(entries) != 1 {
				t.Errorf("the link's target was changed: %v", entries)
			}
		})
	}
}
