package mcp

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/turncli/turncli/client"
)

// Serve runs `mindroom-agent mcp` once package client has read its options: it answers the MCP
// messages of stdin on stdout until stdin ends (after the requests in progress are answered),
// ctx ends or stdout fails, logs on stderr, and returns the exit code. It is a
// client.MCPServer; the binaries pass it to client.Main with client.WithMCP.
func Serve(ctx context.Context, agent *client.Agent, stdin io.Reader, stdout, stderr io.Writer, pageSize int) int {
	s := &mcpServer{
		agent:    agent,
		pageSize: pageSize,
		round:    client.MaxLongPoll,
		taskWait: taskWait,
		now:      time.Now,
		out:      stdout,
		log:      slog.New(slog.NewTextHandler(stderr, nil)).With("component", "mindroom-agent mcp"),
	}
	return s.serve(ctx, stdin)
}
