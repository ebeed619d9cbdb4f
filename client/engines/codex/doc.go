// Package codex is the driver of `mindroom-agent engine codex`: it runs the Codex CLI's
// app-server (JSON-RPC over standard input and output) for one turn of a background agent,
// puts every approval the engine asks for to the people of the conversation, and ends the
// job's output with the result line of package engines.
//
// # What it needs
//
// The codex CLI on PATH: `npm i -g @openai/codex@0.169.0` (the version the driver is tested
// with), which needs Node.js 18 or newer.
//
// # Configuration and authentication
//
// Codex runs with CODEX_HOME=$MINDROOM_AGENT_ENGINE_HOME/codex, a directory of the job's own
// whose config.toml the driver writes on every run; nothing is read from the host's ~/.codex,
// and the repository's AGENTS.md files are not read either (project_doc_max_bytes = 0). The
// CLI gets an explicit environment (see cliEnv), never the driver's whole one. The model is
// reached through these variables of the job:
//
//   - OPENAI_API_KEY: the API key. It goes to the CLI only, never into config.toml.
//   - OPENAI_BASE_URL: when set, the base URL of a Responses API (ending in /v1); the driver
//     writes a model provider "turncli" with wire_api "responses" and env_key OPENAI_API_KEY.
//     Unset: Codex's built-in OpenAI provider, which also authenticates with OPENAI_API_KEY.
//   - OPENAI_MODEL: when set, the model to ask for; unset: Codex's default.
//   - HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY, SSL_CERT_FILE, SSL_CERT_DIR: passed on, for
//     a job that reaches its model through a proxy or a private certificate authority.
//
// Nothing else leaves the job: update checks, analytics and feedback uploads are off, and so
// are the features that reach services of their own (ChatGPT apps, plugin marketplaces, tool
// suggestions; see offlineFeatures).
//
// # Permissions
//
// The thread runs in Codex's workspace-write sandbox under the on-request approval policy:
// commands run sandboxed in the job's working directory without asking, and whatever needs
// more (a command the model wants to run outside the sandbox, a file change outside the
// workspace, extra permissions) is an approval request from the server. Each one is submitted
// as interaction.permission_prompt through the Agent CLI and answered accept only when people
// allowed it; a denial, an expiry, a cancellation or any failure is a decline. The live
// process waits as long as the prompt does. The response's catalog is the MCP server
// "mindroom" (this executable's `mcp` command), whose tools Codex calls without asking: the
// primary gates each call itself.
//
// # Limits
//
// The driver runs one turn. MINDROOM_AGENT_MAX_TURNS has no meaning for it (Codex counts no
// model turns within a turn) and is ignored; MINDROOM_AGENT_MAX_BUDGET_USD likewise, since
// Codex reports tokens, not cost. SIGTERM or SIGINT interrupts the turn, stops the server and
// still writes a failed result saying the run was stopped.
//
// Like the rest of the client, this package uses only the standard library.
package codex
