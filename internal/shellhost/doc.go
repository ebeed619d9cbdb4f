// Package shellhost runs a response's Bash commands on the host it is in: the primary's own
// host for local shells, or a worker's sandbox.
//
// It owns what a command sees: an explicit environment (an allowlist of the host process's
// variables, the three Agent CLI variables, and PATH with the private agent_cli_bin/ first),
// the per-agent workspace it starts in, and the agent_cli_bin/ launcher itself. It never passes
// the host process's environment through wholesale, so the primary's or the worker's credentials
// cannot reach a shell. Starting and stopping the process is internal/bashexec's job.
package shellhost
