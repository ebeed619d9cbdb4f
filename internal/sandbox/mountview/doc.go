// Package mountview builds the file system a sandboxed shell sees, from inside a new mount and
// PID namespace, before anything of the shell runs: the host's tree read-only and without
// set-user-id or devices, the control groups hidden, a fresh /proc of the sandbox's own PID namespace, a minimal /dev, a private /tmp,
// the paths to hide (the state directory, other agents' workspaces) replaced by empty
// directories, and only the agent's workspace writable.
//
// A hidden path under a directory the shell could not pass through (a state directory in
// root's 0700 home) is hidden from that directory down, and the paths bound back into it (the
// workspace, agent_cli_bin/, the client binary) keep their absolute paths: the shell reaches
// them through directories that exist only in its own view.
//
// It is imported by the sandbox's init process (internal/reaper/supervisor), which runs before
// the rest of the binary is initialised, so it imports nothing beyond the system call packages.
// It does not start processes, switch users or set limits.
package mountview
