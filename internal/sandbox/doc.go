// Package sandbox isolates shells from each other: every response's commands run in a sandbox
// of the response's own, and every background job in one of its own, so that no shell can see,
// signal, trace, read or write another turn.
//
// A sandbox is a set of namespaces made by an init process (internal/sandbox/sandboxinit): a
// PID namespace with its own /proc, in which a shell sees only its own sandbox's processes; a
// mount namespace with the host's tree read-only, a private /tmp and /dev, the state directory
// and other agents' workspaces absent and only the agent's workspace writable
// (internal/sandbox/mountview); an IPC namespace. Its processes run as the agent's own user
// (Identities), with no capability, no_new_privs, and limits on processes, memory, CPU share
// and file size (Limits), in control groups of the sandbox's own.
//
// A response's sandbox is made once, on its first command, and each command is started inside it
// by the shell spawner (internal/shellpriv), which joins its namespaces and control groups for
// the one clone: making namespaces and tearing them down costs several milliseconds of kernel
// time, which a turn's commands then do not pay each. A job's sandbox is its own init, which
// outlives the process that started it, as the job does.
//
// Where the host cannot give namespaces (not root), Detect says why, and nothing is isolated
// beyond the shell user; callers say so at start and in their readiness.
//
// It does not decide what a shell may run, nor which environment it gets.
package sandbox
