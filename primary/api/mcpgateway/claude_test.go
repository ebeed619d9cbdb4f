package mcpgateway_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/turncli/turncli/internal/enginetest"
	"github.com/turncli/turncli/internal/scriptedmodel/messages"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/response"
)

// TestClaudeCodeCallsThroughTheGateway runs the real Claude Code CLI as a runtime's foreground
// engine, given the gateway's URL and credential with --mcp-config and a scripted model that
// uses test.echo: the call is a native call of the response, and the model gets its outcome.
func TestClaudeCodeCallsThroughTheGateway(t *testing.T) {
	claude := enginetest.Claude(t)
	env := testenv.Start(t)
	o := open(t, env)
	model := messages.Start(t, messages.ToolUse("mcp__mindroom__test__echo", `{"word":"hello"}`), messages.Text("Echoed."))
	config, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"mindroom": map[string]any{
		"type": "http", "url": o.url, "headers": map[string]string{"Authorization": "Bearer " + o.token},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	cmd := exec.CommandContext(context.Background(), claude, "-p", "--output-format", "json", "--setting-sources", "",
		"--mcp-config", string(config), "--strict-mcp-config", "--allowedTools", "mcp__mindroom__test__echo", "--", "Echo hello.")
	cmd.Dir = home
	cmd.Env = []string{
		"HOME=" + home, "PATH=" + os.Getenv("PATH"), "CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"),
		"ANTHROPIC_BASE_URL=" + model.URL, "ANTHROPIC_API_KEY=scripted-model-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claude: %v\n%s", err, out)
	}
	tr, ok := model.ToolResult(messages.ToolUseID(0))
	if !ok || tr.IsError || tr.Text != `{"word":"hello"}` {
		t.Fatalf("the model got %+v (found %v)\n%s", tr, ok, out)
	}
	if n := completedNativeEchoes(t, env, o.id); n != 1 {
		t.Fatalf("%d completed native test.echo receipts, want 1", n)
	}
}

// completedNativeEchoes counts the response's completed native calls of test.echo.
func completedNativeEchoes(t *testing.T, env *testenv.Env, id string) int {
	t.Helper()
	r, ok := env.Primary.Internals().Responses.Get(id)
	if !ok {
		t.Fatal("the response is gone")
	}
	n := 0
	for _, rc := range r.Inspect(100).Receipts {
		if rc.Toolkit == "test" && rc.Function == "echo" && rc.Status == response.Completed && rc.Parent == "" {
			n++
		}
	}
	return n
}
