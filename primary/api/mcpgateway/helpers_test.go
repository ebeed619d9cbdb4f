package mcpgateway_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
)

// opened is a response with its gateway MCP endpoint.
type opened struct {
	id, url, token string
}

// open opens a response (edit applied) as a runtime does, closing it at cleanup.
func open(t *testing.T, env *testenv.Env, edit ...func(*responsev1.OpenResponseRequest)) opened {
	t.Helper()
	req := &responsev1.OpenResponseRequest{
		AgentName: "tester", RequesterId: "@alice:example.org",
		Conversation: &conversationv1.Conversation{Channel: "!room:example.org", Thread: "$thread"},
	}
	for _, f := range edit {
		f(req)
	}
	res, err := env.Runtime.OpenResponse(context.Background(), req)
	if err != nil {
		t.Fatalf("OpenResponse: %v", err)
	}
	t.Cleanup(func() { closeResponse(t, env, res.GetResponseId()) })
	if res.GetMcpPath() != "/mcp" || len(res.GetMcpToken()) != 43 {
		t.Fatalf("OpenResponse gave MCP path %q and a token of %d characters", res.GetMcpPath(), len(res.GetMcpToken()))
	}
	return opened{id: res.GetResponseId(), url: env.HTTPURL + res.GetMcpPath(), token: res.GetMcpToken()}
}

func closeResponse(t *testing.T, env *testenv.Env, id string) {
	t.Helper()
	if _, err := env.Runtime.CloseResponse(context.Background(), &responsev1.CloseResponseRequest{ResponseId: id}); err != nil {
		t.Fatalf("CloseResponse: %v", err)
	}
}

// headerTransport sends every request with Authorization: Bearer token, and the other
// headers given.
type headerTransport struct {
	token  string
	header map[string]string
}

func (h headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+h.token)
	for k, v := range h.header {
		req.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(req)
}

// connect connects the official SDK's client to o's endpoint, asking for revision version,
// sending header with every request.
func connect(t *testing.T, o opened, version string, header ...map[string]string) *sdk.ClientSession {
	t.Helper()
	tr := headerTransport{token: o.token}
	if len(header) > 0 {
		tr.header = header[0]
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "gateway-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{
		Endpoint: o.url, HTTPClient: &http.Client{Transport: tr}, MaxRetries: -1,
	}, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect at %s: %v", version, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("the session speaks %s, want %s", got, version)
	}
	return cs
}

// post sends body to url as an MCP client's POST, with authorization (none when empty) and
// extra headers, and returns the status and body.
func post(t *testing.T, url, authorization, body string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// initialize is an initialize request of revision 2025-11-25.
const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`
