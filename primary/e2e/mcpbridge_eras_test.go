package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/internal/testmcp"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/mcpbridge"
)

// TestMCPServersOfBothErasShareOneCatalog mounts two MCP servers in one primary: "legacy", a
// stdio subprocess that speaks only MCP 2025-11-25 (the initialize handshake; server/discover
// is refused), and "stateless", an in-process server behind stateless streamable HTTP that
// speaks only 2026-07-28 (requests carry their revision; the handshake revision is refused).
// The bridge's client finds each one's era, and both servers' tools are listed, described and
// called through the same catalog, each call in its server's revision.
func TestMCPServersOfBothErasShareOneCatalog(t *testing.T) {
	const legacyOnly, statelessOnly = "2025-11-25", "2026-07-28"
	bin := testmcp.Build(t)
	legacyArgs := []string{"-protocol-versions", legacyOnly}
	stateless := testmcp.NewServer(testmcp.Options{ProtocolVersions: []string{statelessOnly}})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return stateless.Server },
		&mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(ts.Close) // after the primary (cleanups run last first): its sessions end first
	env := testenv.Start(t, testenv.WithConfig(func(c *primary.Config) {
		c.MCPServers = []mcpbridge.ServerConfig{
			{Name: "legacy", Description: "A server of MCP 2025-11-25 only.", Command: bin, Args: legacyArgs},
			{Name: "stateless", Description: "A server of MCP 2026-07-28 only.", URL: ts.URL + "/mcp"},
		}
	}))
	ctx := context.Background()

	t.Run("EachServerRefusesTheOtherEra", func(t *testing.T) {
		rpc := startRawMCP(t, exec.Command(bin, legacyArgs...))
		wireErr := rpc.failure(t, "server/discover", `{"_meta":{"`+mcp.MetaKeyProtocolVersion+`":"`+statelessOnly+`","`+mcp.MetaKeyClientCapabilities+`":{}}}`)
		var data mcp.UnsupportedProtocolVersionData
		if wireErr.Code != mcp.CodeUnsupportedProtocolVersion || json.Unmarshal(wireErr.Data, &data) != nil ||
			strings.Join(data.Supported, " ") != legacyOnly {
			t.Errorf("legacy server/discover: error %d %q data %s", wireErr.Code, wireErr.Message, wireErr.Data)
		}
		session, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: legacyOnly})
		if err == nil {
			_, err = session.ListTools(ctx, nil)
			session.Close()
		}
		if err == nil {
			t.Errorf("the stateless server served a client of %s", legacyOnly)
		}
	})

	id := env.Open(t)
	t.Run("BothAreListed", func(t *testing.T) {
		run := mcpBash(t, env, id, "list", "mindroom-agent tools list --limit 1000")
		for _, want := range []string{
			`{"deferred":true,"description":"A server of MCP 2025-11-25 only.`, `"toolkit":"legacy"}`,
			`{"deferred":true,"description":"A server of MCP 2026-07-28 only.`, `"toolkit":"stateless"}`,
		} {
			if run.code != 0 || !strings.Contains(run.stdout, want) {
				t.Errorf("exit %d, stdout %q lacks %s", run.code, run.stdout, want)
			}
		}
	})
	for _, tc := range []struct{ toolkit, revision string }{{"legacy", legacyOnly}, {"stateless", statelessOnly}} {
		t.Run("ToolsOf"+tc.toolkit+"AreDescribedAndCalledIn"+tc.revision, func(t *testing.T) {
			run := mcpBash(t, env, id, "describe-"+tc.toolkit, "mindroom-agent tools describe "+tc.toolkit+".greet")
			if run.code != 0 || !strings.Contains(run.stdout, `"description":"Greet someone by name."`) || !strings.Contains(run.stdout, `"name"`) {
				t.Fatalf("describe: exit %d, stdout %q", run.code, run.stdout)
			}
			mcpExpectCompleted(t, mcpBash(t, env, id, "greet-"+tc.toolkit,
				`mindroom-agent tools call `+tc.toolkit+`.greet '{"name":"`+tc.revision+`"}'`), `"Hello, `+tc.revision+`!"`)
			mcpExpectCompleted(t, mcpBash(t, env, id, "add-"+tc.toolkit,
				`mindroom-agent tools call `+tc.toolkit+`.add '{"a":2,"b":40}'`), `{"sum":42}`)
			mcpExpectCompleted(t, mcpBash(t, env, id, "protocol-"+tc.toolkit,
				`mindroom-agent tools call `+tc.toolkit+`.protocol`), `{"version":"`+tc.revision+`"}`)
		})
	}
}
