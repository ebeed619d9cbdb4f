package mcpgateway_test

import (
	"context"
	"log"
	"log/slog"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/turncli/turncli/internal/logtest"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
)

// TestTheCredentialNeverReachesTheLogs: while the response is open its gateway MCP credential
// is a live secret, masked in every line the primary logs (its own at DEBUG, through the MCP
// calls, and a library's line that holds it); once the response closed it is no longer one.
func TestTheCredentialNeverReachesTheLogs(t *testing.T) {
	before, flags := slog.Default(), log.Flags()
	t.Cleanup(func() { slog.SetDefault(before); log.SetFlags(flags) })
	var logs logtest.Buffer
	env := testenv.Start(t, testenv.WithConfig(func(c *primary.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		c.RouteLibraryLogs = true
	}))
	o := open(t, env)
	cs := connect(t, o, revisions[0])
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "test__fail", Arguments: map[string]any{"message": o.token}}); err != nil {
		t.Fatal(err)
	}
	log.Printf("a library saw %s", o.token)
	out := logs.String()
	if !strings.Contains(out, "a library saw") || strings.Contains(out, o.token) {
		t.Fatalf("the credential was logged unmasked:\n%s", out)
	}
	if got := env.Primary.Internals().Secrets.Redact(o.token); got == o.token {
		t.Fatal("the live credential is not a secret")
	}
	closeResponse(t, env, o.id)
	if got := env.Primary.Internals().Secrets.Redact(o.token); got != o.token {
		t.Fatalf("a revoked credential is still masked as live: %q", got)
	}
}
