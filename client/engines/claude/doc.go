// Package claude drives Claude Code as a background agent's engine: `mindroom-agent engine
// claude` (Run) runs the real claude CLI on the job's brief, shows its progress as plain
// lines, and ends with the result line of package engines; `mindroom-agent engine
// claude-hook` (Hook) is the permission hook the CLI runs before each tool use.
//
// # What it needs
//
// The claude CLI on PATH, version 2.1.328 (npm i -g @anthropic-ai/claude-code@2.1.328;
// Node.js 18 or later), and the model's credentials in the job's environment, which the CLI
// reads itself: ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN, and ANTHROPIC_BASE_URL for a
// gateway). Nothing the CLI finds on the host is used: its configuration and sessions live in
// $MINDROOM_AGENT_ENGINE_HOME/claude, and the user's, project's and local settings files, MCP
// servers configured elsewhere and their hooks are all ignored.
//
// # Permissions
//
// Every tool use passes the hook. The response's own tools (mcp__mindroom__*, served by
// `mindroom-agent mcp`) are allowed: each is an Agent CLI call the primary gates. Read-only
// built-in tools reading inside the working directory are left to the permission mode, which
// allows them. Any other tool use, a read elsewhere included, is put to the conversation's
// people as an interaction.permission_prompt call; their decision allows or denies it. When
// nobody decides within $MINDROOM_AGENT_HOOK_WAIT (50s by default) the hook defers the tool
// use (the CLI's "defer" decision, since 2.1.89): the CLI ends the run with the tool use
// pending, Run reports the run parked, and no process waits for people. Once they decided, the primary runs the
// driver again with $MINDROOM_AGENT_RESUME (the session) and $MINDROOM_AGENT_DECISION (what
// they decided), and the hook answers the pending tool use from it.
//
// Like the rest of the client, this package uses only the standard library.
package claude
