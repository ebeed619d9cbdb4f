// Package worker is mindroom-worker: it runs the Bash commands of responses bound to its worker
// key, inside its sandbox, on behalf of a primary it dials.
//
// It owns one connection to the primary (reconnecting with backoff, and stopping with a
// *RefusedError when the primary refuses it), the commands running on it, and the sandbox
// proxy its shells call. Each command runs like a primary-local shell
// (internal/shellhost): its own process group, an explicit environment that never contains the
// worker's credential, a per-agent workspace, a timeout. Output is sent under per-command
// credit from the primary, so a slow consumer blocks the command's pipe rather than growing
// memory. Background jobs, which outlive the connection and the worker itself, are worker/jobs'.
// It makes no authorization decision: the primary decides what a grant may do.
package worker
