// Package mcp serves the tools of an agent response over MCP (Model Context Protocol, stdio
// transport: JSON-RPC 2.0, one message per line) for `mindroom-agent mcp`, so that an engine
// started inside a Bash command (Claude Code, Codex, …) reaches the response's tools as MCP
// tools. It owns the JSON-RPC framing (rpc.go), which MCP revision each request speaks and the
// lifecycle methods of both eras, initialize and server/discover (revisions.go), the MCP
// methods and their translation to Agent CLI operations (tools.go), tasks, which are receipts
// (tasks.go: the Tasks extension of 2026-07-28 and the tasks of 2025-11-25), tool names
// (names.go), and the permission_prompt answer that is always a decision (permission.go).
//
// It is still only a client of the Agent CLI: every MCP request becomes Agent CLI operations
// sent with the command's grant and window, and the server decides everything. It does not own
// the transport, the grant and environment handling, call ids or the wait for a receipt, which
// stay in package client (client.Agent), nor the command line of `mindroom-agent mcp` (its
// options, help and completion), which package client reads before it calls Serve. Package
// client does not import this one; the binaries wire it in with client.WithMCP.
//
// Like package client it uses only the standard library, client and internal/canonjson;
// client's imports_test.go enforces this.
package mcp
