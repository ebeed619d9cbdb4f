// Package reaper contains a command's whole process tree where the host offers no cgroup v2
// containment (internal/containment): the command runs under a supervisor, a copy of the
// current binary started in its place, and nothing the command starts outlives it, including
// processes that called setsid to leave its session and process group.
//
// The supervisor makes itself a child subreaper (PR_SET_CHILD_SUBREAPER), so every orphaned
// descendant of the command is re-parented to it rather than to init, and then starts the
// command as the leader of a process group of its own. It stays the parent of everything the
// command leaves running, which is what lets it find it all: its children, their children, and so
// on, in /proc. When the command's process exits, or the supervisor is asked to kill it
// (KillSignal), or — for a command started with WithParent — the process that started it dies
// (the parent-death signal is KillSignal too), it SIGKILLs every descendant it finds and reaps them
// until it has no child left, then exits the way the command did: the same exit code, or death by
// the same signal, so its starter reads the command's status from it unchanged. SIGTERM, SIGINT
// and SIGQUIT sent to the supervisor go to the command's process group, as they would have
// reached it without a supervisor.
//
// The supervisor is started through the same restricted path as the command would have been
// (internal/shellpriv): it runs as the shell user, without capabilities and with no_new_privs,
// and the command inherits exactly that. It gives the command nothing the command would not have
// had. Running as the same user, a command can kill its own supervisor; the command's process
// then dies with it (its parent-death signal), but what it had already moved out of its process
// group is left running. Only a cgroup closes that gap.
//
// Every binary that links this package can be a supervisor: the init of its supervisor package
// takes over a process started as one (see Wrap) before main runs, so no binary, test binaries
// included, can start a supervisor it cannot itself be.
//
// It does not decide when a command is stopped, nor how long it is given to end after SIGTERM:
// callers send the signals.
package reaper
