package mcpgateway_test

import (
	"context"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/turncli/turncli/internal/testenv"
)

// TestACallIsAnsweredWhenItSettles: tools/call waits for a call that settles long after the
// fast-call budget (test.gate, blocked until another request releases it), at both revisions.
func TestACallIsAnsweredWhenItSettles(t *testing.T) {
	env := testenv.Start(t)
	for _, version := range revisions {
		t.Run(version, func(t *testing.T) {
			o := open(t, env)
			cs := connect(t, o, version)
			gate := "gate-" + version
			answered := make(chan *sdk.CallToolResult, 1)
			failed := make(chan error, 1)
			go func() {
				res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "test__gate", Arguments: map[string]any{"name": gate}})
				if err != nil {
					failed <- err
					return
				}
				answered <- res
			}()
			// Released only once it runs: an answer that did not wait would say running.
			select {
			case <-env.Primary.Internals().TestToolkit.Started(gate):
			case res := <-answered:
				t.Fatalf("test.gate was answered before it ran: %s", contents(res))
			case err := <-failed:
				t.Fatal(err)
			}
			if _, err := connect(t, o, version).CallTool(context.Background(), &sdk.CallToolParams{Name: "test__release", Arguments: map[string]any{"name": gate}}); err != nil {
				t.Fatal(err)
			}
			select {
			case res := <-answered:
				if res.IsError || res.Meta["mindroom-agent/status"] != "completed" {
					t.Fatalf("test.gate answered isError %v, %s, %v", res.IsError, contents(res), res.Meta)
				}
			case err := <-failed:
				t.Fatal(err)
			}
		})
	}
}
