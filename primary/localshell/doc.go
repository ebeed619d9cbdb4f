// Package localshell runs a response's Bash commands on the primary host ("local shells").
//
// It owns what a local command sees: an explicit environment (an allowlist of the primary's
// variables, the three Agent CLI variables, and PATH with the private agent_cli_bin/ first),
// the per-agent workspace it starts in, and the agent_cli_bin/ launcher itself. It never passes
// the primary's own environment through wholesale, so the primary's credentials cannot reach a
// shell. Starting and stopping the process is internal/bashexec's job.
package localshell
