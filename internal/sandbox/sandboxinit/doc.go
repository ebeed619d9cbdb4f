// Package sandboxinit is the first process of every sandbox: what a process started by
// internal/sandbox runs instead of the binary's main, alone in new PID, mount and IPC
// namespaces. It joins the sandbox's control groups, builds the sandbox's file system
// (internal/sandbox/mountview), gives up its privileges and then, by mode:
//
//   - hold: keeps a response's sandbox alive for the commands the primary or worker starts in
//     it, reaping what they orphan, until its standard input ends (the process that started it
//     closed it, or died). As the PID namespace's init, its exit kills everything in the
//     sandbox. It ignores every signal a shell could send it and keeps no capability, so a shell
//     in the sandbox can neither end nor trace it.
//   - job: writes the job's identity, switches to the agent's user and supervises the job's
//     command (internal/reaper/supervisor), whose exit ends the sandbox.
//
// A package of its own, initialised before almost everything else of the binary, for the same
// reason as the supervisor: its init takes the process over before main runs.
package sandboxinit
