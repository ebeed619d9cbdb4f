package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
)

// TestMindroomAgentMCP runs `mindroom-agent mcp` under MCP clients of the official Go SDK: one
// started inside a real Bash command of a response, as an engine would be, and one the test
// keeps running after the Bash command whose window it was given has ended.
func TestMindroomAgentMCP(t *testing.T) {
	env := testenv.Start(t)
	client := buildMCPClient(t)

	t.Run("ClientInsideABashCommandListsEveryPageCallsAndSeesToolErrors", func(t *testing.T) {
		id := env.Open(t)
		run := env.RunBash(t, id, "bash-mcp", bashQuote(client)+
			` -call 'test__echo {"hello":"mcp"}' -call 'test__fail {"message":"boom"}' -- mindroom-agent mcp --page-size 4`)
		if code := run.Result.GetExitCode(); code != 0 {
			t.Fatalf("exit %d\nstdout %s\nstderr %s", code, run.Stdout, run.Stderr)
		}
		var got mcpClientReport
		if err := json.Unmarshal([]byte(run.Stdout), &got); err != nil {
			t.Fatalf("client output %q: %v", run.Stdout, err)
		}
		if got.ProtocolVersion != "2026-07-28" || got.ServerName != "mindroom-agent" || got.CloseError != "" {
			t.Fatalf("session: version %q server %q close error %q", got.ProtocolVersion, got.ServerName, got.CloseError)
		}

		tools := map[string]*mcp.Tool{}
		if len(got.Pages) < 2 {
			t.Fatalf("%d pages, want the catalog over several pages of at most 4", len(got.Pages))
		}
		for i, page := range got.Pages {
			if len(page) == 0 || len(page) > 4 {
				t.Errorf("page %d has %d tools", i, len(page))
			}
			for _, tool := range page {
				if tools[tool.Name] != nil {
					t.Errorf("%s is listed twice", tool.Name)
				}
				tools[tool.Name] = tool
			}
		}
		for name, title := range map[string]string{
			"test__echo": "test.echo", "test__fail": "test.fail", "test__huge_schema": "test.huge_schema",
			"test_deferred__ping": "test_deferred.ping", "test_deferred__add": "test_deferred.add",
			"shell__run_shell_command": "shell.run_shell_command",
		} {
			if tool := tools[name]; tool == nil || tool.Title != title {
				t.Errorf("tool %s: %+v, want title %s", name, tool, title)
			}
		}
		// huge_schema's descriptor is over 32 KiB: the server read it back from its context document.
		var huge struct {
			Properties map[string]any `json:"properties"`
		}
		if raw, err := json.Marshal(tools["test__huge_schema"].InputSchema); err != nil || json.Unmarshal(raw, &huge) != nil || len(huge.Properties) != 400 {
			t.Errorf("huge_schema input schema has %d properties, want 400", len(huge.Properties))
		}
		if env.Primary.Internals().TestDeferred.Loads() == 0 {
			t.Errorf("listing did not load the deferred toolkit")
		}

		if len(got.Calls) != 2 {
			t.Fatalf("calls %+v", got.Calls)
		}
		echo, fail := got.Calls[0].Result, got.Calls[1].Result
		if echo == nil || echo.IsError || mcpText(echo) != `{"hello":"mcp"}` || mcpJSON(t, echo.StructuredContent) != `{"hello":"mcp"}` {
			t.Errorf("echo result %s", mcpJSON(t, echo))
		}
		if fail == nil || !fail.IsError || mcpText(fail) != "boom" {
			t.Errorf("fail result %s", mcpJSON(t, fail))
		}
		// The calls are the command's own Agent CLI calls: same window, same receipts.
		receipts := receiptsByFunction(run.Result.GetReceipts())
		for fn, want := range map[string]struct {
			result *mcp.CallToolResult
			status responsev1.CallStatus
		}{
			"test.echo": {echo, responsev1.CallStatus_CALL_STATUS_COMPLETED},
			"test.fail": {fail, responsev1.CallStatus_CALL_STATUS_FAILED},
		} {
			r := receipts[fn]
			if r == nil || r.GetStatus() != want.status || r.GetParentBashCallId() != "bash-mcp" ||
				want.result == nil || want.result.Meta["mindroom-agent/call_id"] != r.GetCallId() {
				t.Errorf("receipt of %s = %v for result %s", fn, r, mcpJSON(t, want.result))
			}
		}
	})

	t.Run("CallThroughAServerThatOutlivedItsBashCommandIsRefused", func(t *testing.T) {
		id := env.Open(t)
		envFile := filepath.Join(t.TempDir(), "env")
		// The command writes its three variables, then holds its window open on a gate.
		done := make(chan testenv.BashRun, 1)
		go func() {
			done <- env.RunBashContext(context.Background(), t, id, "bash-outlived",
				`printf '%s\n' "$MINDROOM_AGENT_CLI_URL" "$MINDROOM_AGENT_CLI_TOKEN" "$MINDROOM_AGENT_CLI_WINDOW" >`+bashQuote(envFile)+
					` && mindroom-agent tools call test.gate '{"name":"mcp-outlived"}' --timeout 60`, 0)
		}()
		select {
		case <-env.Primary.Internals().TestToolkit.Started("mcp-outlived"):
		case run := <-done:
			t.Fatalf("the command ended before its gate: %v\nstderr %s", run.Result, run.Stderr)
		}
		data, err := os.ReadFile(envFile)
		if err != nil {
			t.Fatal(err)
		}
		vars := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		if len(vars) != 3 {
			t.Fatalf("variables %q", vars)
		}

		// The server gets that command's environment and nothing else.
		cmd := exec.Command(env.AgentBinary, "mcp")
		cmd.Env = []string{"MINDROOM_AGENT_CLI_URL=" + vars[0], "MINDROOM_AGENT_CLI_TOKEN=" + vars[1], "MINDROOM_AGENT_CLI_WINDOW=" + vars[2]}
		cmd.Stderr = mcpLogWriter{t}
		ctx := context.Background()
		session, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		closed := false
		defer func() {
			if !closed {
				session.Close()
			}
		}()
		var listed int
		for tool, err := range session.Tools(ctx, nil) {
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			if tool.Name == "test__echo" {
				listed++
			}
		}
		if listed != 1 {
			t.Fatalf("test__echo listed %d times", listed)
		}
		open, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "test__echo", Arguments: map[string]any{"window": "open"}})
		if err != nil || open.IsError || mcpText(open) != `{"window":"open"}` {
			t.Fatalf("call while the window is open: %s, %v", mcpJSON(t, open), err)
		}

		env.Primary.Internals().TestToolkit.Release("mcp-outlived")
		run := <-done // RunBash returns only once the window has closed
		if code := run.Result.GetExitCode(); code != 0 {
			t.Fatalf("command exit %d, stderr %s", code, run.Stderr)
		}
		receipts := receiptsByFunction(run.Result.GetReceipts())
		if r := receipts["test.echo"]; r == nil || r.GetParentBashCallId() != "bash-outlived" || r.GetCallId() != open.Meta["mindroom-agent/call_id"] {
			t.Fatalf("the MCP call is not a receipt of the command's window: %v", run.Result.GetReceipts())
		}

		late, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "test__echo", Arguments: map[string]any{"window": "closed"}})
		if err != nil {
			t.Fatalf("call after the window closed is a protocol error, want a tool error: %v", err)
		}
		if !late.IsError || !strings.Contains(mcpText(late), "Bash call has ended") {
			t.Fatalf("call after the window closed: %s", mcpJSON(t, late))
		}
		closed = true
		if err := session.Close(); err != nil {
			t.Fatalf("the server did not exit 0 at the end of its input: %v", err)
		}
	})
}

// mcpClientReport is what internal/testmcpclient prints.
type mcpClientReport struct {
	ProtocolVersion string        `json:"protocol_version"`
	ServerName      string        `json:"server_name"`
	Pages           [][]*mcp.Tool `json:"pages"`
	Calls           []struct {
		Name   string              `json:"name"`
		Result *mcp.CallToolResult `json:"result"`
		Error  string              `json:"error"`
	} `json:"calls"`
	CloseError string `json:"close_error"`
}

// buildMCPClient builds internal/testmcpclient for this test.
func buildMCPClient(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "testmcpclient")
	build := exec.Command("go", "build", "-o", bin, "github.com/turncli/turncli/internal/testmcpclient")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build testmcpclient: %v\n%s", err, out)
	}
	return bin
}

// mcpText returns the text of a result's first content.
func mcpText(res *mcp.CallToolResult) string {
	if res == nil || len(res.Content) == 0 {
		return ""
	}
	if text, ok := res.Content[0].(*mcp.TextContent); ok {
		return text.Text
	}
	return ""
}

func mcpJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// mcpLogWriter routes a server's stderr to the test log.
type mcpLogWriter struct{ t testing.TB }

func (w mcpLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
