// Package mcpgateway serves a response's native catalog over MCP on the primary's REST
// listener, at Path: streamable HTTP, stateless, through the official MCP Go SDK. It is the one
// MCP URL and bearer credential a runtime hands a foreground engine it runs itself (Claude
// Code, Codex), so the engine reaches the response's tools and interaction controls without
// the runtime bridging ResponseService's native calls. It answers MCP 2026-07-28 requests,
// each standing alone (server/discover), and the initialize handshake of 2025-11-25 and older.
//
// It authenticates every request by the response's gateway MCP credential (never its Agent CLI
// grant) before reading its body, bounds the body as the Agent CLI does, and turns tools/list
// and tools/call into the response's native operations (ListNativeTools, DescribeNative,
// CallNative, Receipt), which decide what is offered and admitted and apply the response's
// limits. It names, annotates and answers tools as `mindroom-agent mcp` does (client/mcp), and
// serves the Tasks extension of 2026-07-28 with client/mcp's shapes: a task is a native call's
// receipt, read through Receipt (tasks.go). It keeps no state of its own but the map of hashed
// tool names.
//
// It is one of the primary's API adapters (docs/ARCHITECTURE.md): only package primary imports
// it.
package mcpgateway
