// Package procsec hardens the primary's and the worker's own process against the shells they
// run: it makes the process non-dumpable, so a shell cannot read the process's environment or
// memory through /proc (where a credential passed in the environment would otherwise be
// readable), and it keeps every descriptor the process inherited above 0, 1 and 2 from reaching
// the programs it starts. Shells started afterwards are dumpable again (execve resets it).
//
// Files are isolated by the shell user (internal/shellpriv) and the modes of the state
// directory, not here.
package procsec

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// NonDumpable marks the calling process non-dumpable.
func NonDumpable() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}

// CloseOnExecAbove2 marks every open descriptor from 3 up close-on-exec, so that commands, jobs,
// tool hosts and MCP servers receive only what they are explicitly given (a descriptor the
// launching shell left open, say a writable fd 7, would otherwise reach every one of them). Go
// opens its own descriptors close-on-exec; only inherited ones need this. Kernels without
// close_range(2) (before 5.11) are handled by walking /proc/self/fd.
func CloseOnExecAbove2() error {
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return nil
	}
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < 3 {
			continue
		}
		// The descriptor ReadDir itself had open is closed by now; EBADF for it is expected.
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && err != unix.EBADF {
			return err
		}
	}
	return nil
}
