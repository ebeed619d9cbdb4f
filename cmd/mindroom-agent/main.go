// Command mindroom-agent lists, searches, describes and calls the tools of the agent response
// whose grant is in its environment. All behaviour lives in package client, in package
// client/mcp for `mindroom-agent mcp`, and in the drivers under client/engines for
// `mindroom-agent engine NAME`.
package main

import (
	"context"
	"os"

	"github.com/turncli/turncli/client"
	"github.com/turncli/turncli/client/engines/claude"
	"github.com/turncli/turncli/client/engines/codex"
	"github.com/turncli/turncli/client/mcp"
)

// main installs no signal handler: the client installs one only when a call needs a second
// request to settle (see client.waitFor), so a fast call never pays for the signal thread.
func main() {
	os.Exit(client.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv, client.WithMCP(mcp.Serve),
		client.WithEngines(map[string]client.EngineDriver{claude.Engine: claude.Run, claude.HookCommand: claude.Hook, "codex": codex.Run})))
}
