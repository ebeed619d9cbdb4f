// Package bashexec runs one Bash command as its own process group with an explicit environment,
// streams its output with backpressure, and stops the whole group on timeout or cancellation. It
// is the one place that starts and stops an agent's Bash process; the primary's local shells and
// the worker both call Run.
//
// What Run owns, for the lifetime of one call:
//
//   - The process: `bash --noprofile --norc -c <script>` started as the leader of a new session
//     and process group, without a controlling terminal, in Spec.Dir, with exactly Spec.Env as its environment (never os.Environ() of the
//     calling process, which may hold credentials).
//   - Stopping it: on timeout or context cancellation, SIGTERM to the whole group (-pgid), then
//     SIGKILL to the group after the grace period. Signalling the group rather than the pid is what
//     reaches grandchildren such as `sleep 100 &` or the children of nested `bash -c`.
//   - Cleaning up after it: when the main process has exited, for any reason, the rest of its
//     group is SIGKILLed, and so is everything left in the command's cgroup leaf
//     (internal/containment), which also holds the processes that called setsid and left the
//     group. A command's descendants therefore do not outlive the command, nor the process that
//     runs it (the leaf's watchdog kills them when that process dies). Where the host offers no
//     cgroup v2 hierarchy, bash runs under a supervisor (internal/reaper) that leads the group
//     alone: it forwards SIGTERM to bash's own group, is asked rather than forced to kill (a
//     SIGKILL would leave the tree), and kills every descendant, setsid'd ones included, when
//     bash exits or this process dies; it then exits as bash did, so the Result is the same.
//     Every group signal is sent while the leader is alive or an unreaped zombie, so the group
//     id cannot have been reused by an unrelated process.
//   - Its pipes: stdout and stderr are read by two goroutines started and awaited by Run, and
//     handed to Output one call at a time; Output blocking is the backpressure. After the group
//     is gone Run waits at most Spec.PipeWait for end of file (the role cmd.WaitDelay plays in
//     os/exec), because a process that escaped the group may hold a pipe open forever. Then it
//     delivers what the pipes already buffer and closes them, so a slow Output loses nothing the
//     process group wrote.
//
// What it does not own: any policy. It does not decide which variables the environment holds,
// opens no windows, checks no grants, and keeps no record of commands; callers build the Spec and
// interpret the Result. A non-zero exit status is data in Result, never an error.
package bashexec
