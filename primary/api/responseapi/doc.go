// Package responseapi serves ResponseService: the agent runtime's API for opening a response,
// running its Bash commands, fencing it, rebinding its catalog and closing it. Handlers decode,
// call the response package, and encode; a command's exit status travels as data in the
// stream's final message, never as an RPC error.
// A response opened without a shell mode takes the one stored for its conversation and agent
// (standard when none is), and keeps it until it closes. One that names the minimal mode opens
// only if the minimal mode's preflight (package shellmode, the check an operator's
// SetShellMode runs) finds no problem; otherwise the open fails naming every problem and its fix.
//
// It does not authenticate (the roleauth interceptor does, before any handler runs) and does
// not run processes itself (the response's ShellLauncher does).
//
// It is one of the primary's API adapters (docs/ARCHITECTURE.md): only package primary imports it.
package responseapi
