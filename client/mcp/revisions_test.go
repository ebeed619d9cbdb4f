package mcp

import (
	"strings"
	"testing"

	"github.com/turncli/turncli/client"
)

// statelessMeta is the _meta of a request of MCP 2026-07-28, with extra keys after it.
func statelessMeta(extra string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"test","version":"1"}` + extra + `}`
}

const serverInfoMeta = `"io.modelcontextprotocol/serverInfo":{"name":"mindroom-agent","title":"MindRoom Agent CLI","version":"1"}`

func TestMCPStatelessRevision(t *testing.T) {
	t.Run("DiscoverAnswersTheRevisionsCapabilitiesWithTheTasksExtensionAndIdentityWithoutInitialize", func(t *testing.T) {
		m := startMCP(t, nil, 0)
		res := m.result(`1`, "server/discover", `{`+statelessMeta("")+`}`)
		want := `{"_meta":{` + serverInfoMeta + `},"capabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}},"tools":{"listChanged":false}},"instructions":` + canon(t, mcpInstructions) +
			`,"resultType":"complete","serverInfo":{"name":"mindroom-agent","title":"MindRoom Agent CLI","version":"1"},` +
			`"supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"]}`
		if got := canon(t, res); got != want {
			t.Fatalf("discover\n got %s\nwant %s", got, want)
		}
	})
	t.Run("DiscoverWithoutTheStatelessRevisionIsMethodNotFound", func(t *testing.T) {
		m := startMCP(t, nil, 0)
		code, msg, _ := m.rpcError(`1`, "server/discover", `{}`)
		if code != codeMethodNotFound || msg != `Method not found: server/discover is MCP 2026-07-28 and needs _meta "io.modelcontextprotocol/protocolVersion":"2026-07-28"` {
			t.Fatalf("code %d message %q", code, msg)
		}
	})
	t.Run("UnsupportedRevisionIsRefusedWithTheRevisionsServed", func(t *testing.T) {
		m := startMCP(t, nil, 0)
		for _, method := range []string{"server/discover", "tools/list", "tools/call", "ping"} {
			a := m.request(`1`, method, `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}`)
			want := `{"code":-32022,"data":{"requested":"2099-01-01","supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"]},"message":"Unsupported protocol version: 2099-01-01"}`
			if got := canon(t, a["error"]); got != want {
				t.Fatalf("%s: error\n got %s\nwant %s", method, got, want)
			}
		}
	})
	t.Run("StatelessRequestWithoutCapabilitiesOrWithABadMetaIsInvalidParams", func(t *testing.T) {
		m := startMCP(t, nil, 0)
		for params, want := range map[string]string{
			`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`:                                                                                          `a request of MCP 2026-07-28 needs _meta "io.modelcontextprotocol/clientCapabilities", an object`,
			`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}}`:                                          `a request of MCP 2026-07-28 needs _meta "io.modelcontextprotocol/clientCapabilities", an object`,
			`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":"x"}}`: `_meta "io.modelcontextprotocol/clientInfo" must be an object`,
			`{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728}}`:                                                                                              `_meta "io.modelcontextprotocol/protocolVersion" must be a string`,
		} {
			if code, msg, _ := m.rpcError(`1`, "tools/list", params); code != codeInvalidParams || msg != want {
				t.Fatalf("%s: code %d message %q", params, code, msg)
			}
		}
	})
	t.Run("InitializeAndPingAreNotPartOfTheStatelessRevision", func(t *testing.T) {
		m := startMCP(t, nil, 0)
		for _, method := range []string{"initialize", "ping"} {
			code, msg, _ := m.rpcError(`1`, method, `{"protocolVersion":"2025-11-25",`+statelessMeta("")+`}`)
			if code != codeMethodNotFound || msg != "Method not found: "+method+" is not part of MCP 2026-07-28" {
				t.Fatalf("%s: code %d message %q", method, code, msg)
			}
		}
	})
	t.Run("InitializeAskingForTheStatelessRevisionIsAnsweredWithTheNewestHandshakeRevision", func(t *testing.T) {
		m := startMCP(t, nil, 0)
		if res := m.initialize("2026-07-28"); res["protocolVersion"] != "2025-11-25" {
			t.Fatalf("protocolVersion = %v", res["protocolVersion"])
		}
	})
	t.Run("HandshakeRevisionNamedInMetaIsTheHandshakeEra", func(t *testing.T) {
		m := startMCP(t, nil, 0)
		if res := m.result(`1`, "ping", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-06-18"}}`); len(res) != 0 {
			t.Fatalf("ping result = %v", res)
		}
	})
	t.Run("ToolsListNeedsNoInitializeAndCarriesResultTypeAndIdentity", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		res := m.result(`1`, "tools/list", `{`+statelessMeta("")+`}`)
		if res["resultType"] != "complete" || canon(t, res["_meta"]) != `{`+serverInfoMeta+`}` {
			t.Fatalf("tools/list result lacks resultType or identity: resultType %v _meta %v", res["resultType"], res["_meta"])
		}
		if names := toolNamesOf(t, res); strings.Join(names, " ") != strings.Join(wholeCatalog, " ") {
			t.Fatalf("names %v", names)
		}
		if echo := toolByName(t, res, "test__echo"); echo["title"] != "test.echo" {
			t.Fatalf("echo %v", echo)
		}
	})
	t.Run("ToolsCallAnswersWithResultTypeStructuredContentAndTheCallID", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		res := m.result(`1`, "tools/call", `{"name":"test__echo","arguments":{"a":1},`+statelessMeta("")+`}`)
		id := callIDOf(t, res)
		want := `{"_meta":{` + serverInfoMeta + `,"mindroom-agent/call_id":"` + id + `","mindroom-agent/status":"completed"},` +
			`"content":[{"text":"{\"a\":1}","type":"text"}],"isError":false,"resultType":"complete","structuredContent":{"a":1}}`
		if got := canon(t, res); got != want {
			t.Fatalf("tools/call\n got %s\nwant %s", got, want)
		}
	})
	t.Run("StatelessRequestLeavesTheHandshakeRevisionAlone", func(t *testing.T) {
		f := newFakeAgentCLI(t)
		m := startMCP(t, f.env(), 0)
		m.initialize("2024-11-05")
		if res := m.result(`1`, "tools/call", `{"name":"test__echo","arguments":{"a":1},`+statelessMeta("")+`}`); res["structuredContent"] == nil {
			t.Fatalf("a 2026-07-28 call got no structuredContent: %v", res)
		}
		res := callResultOf(t, m, `2`, "test__echo", `{"a":1}`)
		if res["structuredContent"] != nil || res["resultType"] != nil || res["_meta"].(map[string]any)[metaStatus] != client.StatusCompleted {
			t.Fatalf("a 2024-11-05 call after a stateless one got %v", res)
		}
	})
}
