// Package responses is a scripted model endpoint for tests: an HTTP server on loopback that
// speaks the streaming subset of the OpenAI Responses API the Codex CLI uses, so the real CLI
// can run a whole turn without a real model.
//
// The server plays a script, a list of steps, one per request of the main conversation: each
// step answers with a final text (a message item) or a tool call (a function_call item, such
// as Codex's shell tool exec_command or an MCP tool). Requests the CLI makes on the side (a
// title, a summary, anything whose x-codex-turn-metadata names a request_kind other than
// "turn") get a short text and consume no step. Every request is recorded, so a test can
// assert what the model was sent: the output of a tool call, the words of a denial.
//
// When the script runs out, a main request is answered with HTTP 400, which fails the turn
// instead of letting the CLI retry.
//
// It is test support only; nothing in production imports it. It uses the standard library.
package responses
