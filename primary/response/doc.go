// Package response owns responses: one reply turn of an agent, with its grant (and its gateway
// MCP credential, mcpcredential.go), its windows (one
// per Bash command), the receipts of the CLI calls those windows admitted, its context
// documents and its binding to a catalog snapshot.
//
// Everything here lives in memory and belongs to exactly one Response, guarded by that
// response's mutex: admission, settlement and window closing happen under it, which is what
// makes "a window closes atomically once its admitted work has settled" true. Each admitted
// call or describe runs in a goroutine the response owns and joins when it closes.
//
// The one exception is a call of a function that needs a person's confirmation: CallApprovals
// saves the exact call, with the runtime's checkpoint of its Bash command, in the store before
// it has any effect, so that a decision taken after the response ended (or after a restart)
// runs exactly that call, once, in a fresh short-lived response, never the Bash command again.
//
// It does not own transports or credentials of other roles: the agentcli package turns
// requests into calls on a Response, mcpgateway turns MCP requests into its native calls, and
// responseapi drives responses for the runtime.
//
// docs/ARCHITECTURE.md maps the packages and says which owns each term of the glossary.
package response
