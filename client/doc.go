// Package client is the mindroom-agent command-line client of the Agent CLI (contract
// agent-cli.md, section 12). It owns argument parsing and help, reading and strictly checking
// call input, building the operation bodies, talking to the two REST endpoints, waiting for a
// call to settle (long-poll first, plain polling as the fallback), printing one canonical JSON
// line, and choosing the exit code. It also owns the command line of `mindroom-agent mcp`
// (mcpcommand.go) and what serving it needs of the Agent CLI (agent.go: Agent, Conn), but not
// the MCP server itself, which is package client/mcp; that package imports this one, so the
// binaries pass its entry point to Main with WithMCP.
//
// It does not own authorization, admission, validation of selectors against the catalog, or
// any retry policy: the server decides all of those, and the client never retries a request on
// its own. It keeps no state between runs and reads its environment (URL, grant, window) only
// right before it sends a request, so help and completion work anywhere.
//
// The package, like client/mcp, uses only the standard library and internal/canonjson, so the
// binary can be copied into any sandbox image; imports_test.go enforces this.
package client
