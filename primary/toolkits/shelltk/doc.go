// Package shelltk is the built-in "shell" toolkit: run_shell_command runs a nested Bash command
// in the calling command's window, waits a bounded time for it, and otherwise hands back a
// handle while the command continues in the background; check_shell_command and
// kill_shell_command observe and stop such commands.
//
// It owns the background command records of every response: their bounded output (the first
// and last parts of each stream, with a visible marker for what was dropped), their handles
// (keyed by response, so one response cannot see another's), the per-response limit on live
// background commands, and stopping them all when the response's Lifetime ends. Every command
// runs in a goroutine owned by its record, which ends when the command has exited.
//
// It does not start processes or choose their environment, directory or window: that is the
// catalog.ShellRunner the primary passes with each call (bashexec underneath). It does not
// validate arguments against its schemas either; the registry does that before Call.
package shelltk
