package mcpgateway_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
)

// refused is the one answer to every refused credential.
const refused = `{"detail":"MCP gateway authority is unavailable"}`

// TestCredentialsOtherThanTheResponsesAreRefused: the endpoint opens only with a live gateway
// MCP credential; everything else gets the same 401, whatever the body, and the gateway
// credential opens no Agent CLI route.
func TestCredentialsOtherThanTheResponsesAreRefused(t *testing.T) {
	env := testenv.Start(t)
	o := open(t, env)
	win, err := env.Runtime.OpenWindow(context.Background(), &responsev1.OpenWindowRequest{ResponseId: o.id, BashCallId: "bash-1"})
	if err != nil {
		t.Fatal(err)
	}
	grant := win.GetEnvironment()["MINDROOM_AGENT_CLI_TOKEN"]
	if len(grant) != 43 {
		t.Fatalf("the window's grant is %q", grant)
	}
	if status, body := post(t, o.url, "Bearer "+o.token, initialize, nil); status != http.StatusOK {
		t.Fatalf("the response's own credential got %d %s", status, body)
	}
	for _, tc := range []struct{ name, authorization, body string }{
		{"Absent", "", initialize},
		{"NotBearer", "Basic " + o.token, initialize},
		{"Wrong", "Bearer " + strings.Repeat("A", 43), initialize},
		{"TheResponsesAgentCLIGrant", "Bearer " + grant, initialize},
		{"TheRuntimeCredential", "Bearer " + env.Primary.RuntimeToken(), initialize},
		{"WrongWithAnOversizedBody", "Bearer x", strings.Repeat(" ", 1<<20)},
		{"WrongWithAMalformedBody", "Bearer x", "{"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if status, body := post(t, o.url, tc.authorization, tc.body, nil); status != http.StatusUnauthorized || body != refused {
				t.Fatalf("got %d %s, want 401 %s", status, body, refused)
			}
		})
	}
	t.Run("OnTheAgentCLI", func(t *testing.T) {
		status, body := post(t, env.AgentCLIURL+"/api/agent-cli/operations", "Bearer "+o.token, `{"operation":"tools.list"}`,
			map[string]string{"X-MindRoom-Agent-CLI-Window": win.GetEnvironment()["MINDROOM_AGENT_CLI_WINDOW"]})
		if status != http.StatusUnauthorized || !strings.Contains(body, "Agent CLI authority is unavailable") {
			t.Fatalf("the gateway credential on the Agent CLI got %d %s", status, body)
		}
	})
	t.Run("AfterTheResponseClosed", func(t *testing.T) {
		closeResponse(t, env, o.id)
		if status, body := post(t, o.url, "Bearer "+o.token, initialize, nil); status != http.StatusUnauthorized || body != refused {
			t.Fatalf("a closed response's credential got %d %s", status, body)
		}
	})
}

// TestBodyIsBoundedAsTheAgentCLIs: a body of 64 KiB is read, one byte more is 413.
func TestBodyIsBoundedAsTheAgentCLIs(t *testing.T) {
	env := testenv.Start(t)
	o := open(t, env)
	padded := func(n int) string { // initialize, then spaces up to n bytes: still one JSON value
		return initialize + strings.Repeat(" ", n-len(initialize))
	}
	if status, body := post(t, o.url, "Bearer "+o.token, padded(64<<10), nil); status != http.StatusOK {
		t.Fatalf("a 64 KiB body got %d %s", status, body)
	}
	if status, body := post(t, o.url, "Bearer "+o.token, padded(64<<10+1), nil); status != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body of 64 KiB + 1 got %d %s", status, body)
	}
}
