package mcpgateway_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turncli/turncli/internal/enginetest"
	"github.com/turncli/turncli/internal/scriptedmodel/responses"
	"github.com/turncli/turncli/internal/testenv"
)

// TestCodexCallsThroughTheGateway runs the real Codex CLI (codex exec) as a runtime's
// foreground engine, given the gateway's URL and, through bearer_token_env_var, its credential,
// against a scripted Responses API that calls test.echo: the model gets the call's outcome.
func TestCodexCallsThroughTheGateway(t *testing.T) {
	codex := enginetest.Codex(t)
	env := testenv.Start(t)
	o := open(t, env)
	model := responses.Start(t, responses.Call("mcp__mindroom.test__echo", map[string]any{"word": "hello"}), responses.Say("Echoed."))
	home, work := t.TempDir(), t.TempDir()
	config := strings.Join([]string{
		`model = "gpt-5.1-codex"`,
		`model_provider = "scripted"`,
		`approval_policy = "never"`,
		`sandbox_mode = "read-only"`,
		`check_for_update_on_startup = false`,
		`[analytics]`, `enabled = false`,
		`[model_providers.scripted]`, `name = "scripted"`, `base_url = "` + model.BaseURL() + `"`,
		`wire_api = "responses"`, `env_key = "OPENAI_API_KEY"`,
		// The gateway's URL and credential, and calls run unattended: every tool's annotations
		// say it may change things, which Codex would otherwise decline without asking.
		`[mcp_servers.mindroom]`, `url = "` + o.url + `"`, `bearer_token_env_var = "MINDROOM_MCP_TOKEN"`,
		`default_tools_approval_mode = "approve"`,
	}, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(context.Background(), codex, "exec", "--skip-git-repo-check", "Echo hello.")
	cmd.Dir = work
	cmd.Env = []string{
		"HOME=" + home, "CODEX_HOME=" + home, "PATH=" + os.Getenv("PATH"), "NO_PROXY=127.0.0.1,localhost",
		"OPENAI_API_KEY=test-key", "MINDROOM_MCP_TOKEN=" + o.token,
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("codex: %v\n%s", err, out)
	}
	var got string
	var found bool
	for _, r := range model.MainRequests() {
		if s, ok := r.CallOutput("call_1"); ok {
			got, found = s, true
		}
	}
	if !found || !strings.Contains(got, `{"word":"hello"}`) {
		t.Fatalf("the model got %q (found %v)\n%s", got, found, out)
	}
	if n := completedNativeEchoes(t, env, o.id); n != 1 {
		t.Fatalf("%d completed native test.echo receipts, want 1", n)
	}
}
