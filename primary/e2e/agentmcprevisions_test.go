package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/turncli/turncli/internal/testenv"
)

// TestMindroomAgentMCPRevisions holds the real `mindroom-agent mcp` binary to the official Go
// SDK's client in each era it serves: MCP 2026-07-28 (server/discover, then stateless requests
// carrying their revision in _meta) and 2025-11-25 (the initialize handshake).
func TestMindroomAgentMCPRevisions(t *testing.T) {
	env := testenv.Start(t)
	id := env.Open(t)
	vars := holdWindowOpen(t, env, id, "bash-mcp-revisions", "mcp-revisions")

	for _, tc := range []struct{ name, asked, served string }{
		{"Stateless20260728DiscoversListsAndCalls", "2026-07-28", "2026-07-28"},
		{"Handshake20251125InitializesListsAndCalls", "2025-11-25", "2025-11-25"},
		// The SDK asks server/discover for 2099-01-01, is refused with -32022 and the
		// revisions served, and asks again for 2026-07-28.
		{"UnservedRevisionIsRefusedAndTheClientMovesToAServedOne", "2099-01-01", "2026-07-28"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			session, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).
				Connect(ctx, &mcp.CommandTransport{Command: mcpCommand(t, env, vars)}, &mcp.ClientSessionOptions{ProtocolVersion: tc.asked})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer session.Close()
			init := session.InitializeResult()
			if init.ProtocolVersion != tc.served || init.ServerInfo == nil || init.ServerInfo.Name != "mindroom-agent" ||
				init.Capabilities == nil || init.Capabilities.Tools == nil || !strings.Contains(init.Instructions, "Agent CLI") {
				t.Fatalf("session %s", mcpJSON(t, init))
			}

			var echo *mcp.Tool
			for tool, err := range session.Tools(ctx, nil) {
				if err != nil {
					t.Fatalf("tools/list: %v", err)
				}
				if tool.Name == "test__echo" {
					echo = tool
				}
			}
			if echo == nil {
				t.Fatalf("test__echo is not listed")
			}
			want := `{"destructiveHint":true,"idempotentHint":false,"openWorldHint":true,"readOnlyHint":false,"title":"test.echo"}`
			if got := mcpJSON(t, echo.Annotations); got != want {
				t.Fatalf("test__echo annotations %s, want %s", got, want)
			}

			res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "test__echo", Arguments: map[string]any{"era": tc.served}})
			if err != nil || res.IsError || mcpText(res) != `{"era":"`+tc.served+`"}` || mcpJSON(t, res.StructuredContent) != `{"era":"`+tc.served+`"}` {
				t.Fatalf("call: %s, %v", mcpJSON(t, res), err)
			}
			if callID, _ := res.Meta["mindroom-agent/call_id"].(string); len(callID) != 36 {
				t.Fatalf("call result _meta %v names no call id", res.Meta)
			}
			if err := session.Close(); err != nil {
				t.Fatalf("the server did not exit 0 at the end of its input: %v", err)
			}
		})
	}

	t.Run("UnservedRevisionIsMinus32022WithTheRevisionsServed", func(t *testing.T) {
		ctx := context.Background()
		conn, err := (&mcp.CommandTransport{Command: mcpCommand(t, env, vars)}).Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for i, method := range []string{"server/discover", "tools/list", "tools/call"} {
			reqID, _ := jsonrpc.MakeID(float64(i + 1))
			params := `{"name":"test__echo","_meta":{"` + mcp.MetaKeyProtocolVersion + `":"2099-01-01","` + mcp.MetaKeyClientCapabilities + `":{}}}`
			if err := conn.Write(ctx, &jsonrpc.Request{ID: reqID, Method: method, Params: json.RawMessage(params)}); err != nil {
				t.Fatal(err)
			}
			msg, err := conn.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			resp, ok := msg.(*jsonrpc.Response)
			var wireErr *jsonrpc.Error
			if !ok || resp.ID != reqID || !errors.As(resp.Error, &wireErr) {
				t.Fatalf("%s: answer %#v, want an error", method, msg)
			}
			var data mcp.UnsupportedProtocolVersionData
			if wireErr.Code != mcp.CodeUnsupportedProtocolVersion || json.Unmarshal(wireErr.Data, &data) != nil ||
				data.Requested != "2099-01-01" || strings.Join(data.Supported, " ") != "2026-07-28 2025-11-25 2025-06-18 2025-03-26 2024-11-05" {
				t.Fatalf("%s: error %d %q data %s", method, wireErr.Code, wireErr.Message, wireErr.Data)
			}
		}
	})
}

// mcpCommand is `mindroom-agent mcp` with the environment of the Bash command whose variables
// are vars, and nothing else.
func mcpCommand(t *testing.T, env *testenv.Env, vars []string) *exec.Cmd {
	cmd := exec.Command(env.AgentBinary, "mcp")
	cmd.Env = []string{"MINDROOM_AGENT_CLI_URL=" + vars[0], "MINDROOM_AGENT_CLI_TOKEN=" + vars[1], "MINDROOM_AGENT_CLI_WINDOW=" + vars[2]}
	cmd.Stderr = mcpLogWriter{t}
	return cmd
}

// holdWindowOpen runs a Bash command of response id that writes its three Agent CLI variables
// and then waits on test.gate named gate, so that its window stays open until the test ends.
// It returns the variables; cleanup releases the gate and waits for the command to end.
func holdWindowOpen(t *testing.T, env *testenv.Env, id, bashCallID, gate string) []string {
	t.Helper()
	envFile := filepath.Join(t.TempDir(), "env")
	done := make(chan testenv.BashRun, 1)
	go func() {
		done <- env.RunBashContext(context.Background(), t, id, bashCallID,
			`printf '%s\n' "$MINDROOM_AGENT_CLI_URL" "$MINDROOM_AGENT_CLI_TOKEN" "$MINDROOM_AGENT_CLI_WINDOW" >`+bashQuote(envFile)+
				` && mindroom-agent tools call test.gate '{"name":"`+gate+`"}' --timeout 600`, 0)
	}()
	select {
	case <-env.Primary.Internals().TestToolkit.Started(gate):
	case run := <-done:
		t.Fatalf("the command ended before its gate: %v\nstderr %s", run.Result, run.Stderr)
	}
	t.Cleanup(func() {
		env.Primary.Internals().TestToolkit.Release(gate)
		<-done
	})
	data, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	vars := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(vars) != 3 {
		t.Fatalf("variables %q", vars)
	}
	return vars
}
