package mcpgateway_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/turncli/turncli/internal/testenv"
)

// TestAnUnsupportedRevisionIsRefusedWithItsCode: a stateless request naming a revision the
// gateway does not serve gets JSON-RPC error -32022 (UnsupportedProtocolVersionError of MCP
// 2026-07-28, over HTTP 400) listing the revisions it serves and the one asked for.
func TestAnUnsupportedRevisionIsRefusedWithItsCode(t *testing.T) {
	env := testenv.Start(t)
	o := open(t, env)
	const asked = "2099-01-01"
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"` + asked + `",` +
		`"io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"curl","version":"1"}}}}`
	status, got := post(t, o.url, "Bearer "+o.token, body, map[string]string{"MCP-Protocol-Version": asked, "Mcp-Method": "tools/list"})
	var answer struct {
		ID    int `json:"id"`
		Error struct {
			Code int `json:"code"`
			Data struct {
				Supported []string `json:"supported"`
				Requested string   `json:"requested"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(got), &answer); err != nil {
		t.Fatalf("got %d %s: %v", status, got, err)
	}
	if status != http.StatusBadRequest || answer.ID != 7 || answer.Error.Code != -32022 ||
		answer.Error.Data.Requested != asked || !slices.Contains(answer.Error.Data.Supported, "2026-07-28") ||
		!slices.Contains(answer.Error.Data.Supported, "2025-11-25") {
		t.Fatalf("got %d %s, want 400 and error -32022 listing the served revisions", status, got)
	}
}
