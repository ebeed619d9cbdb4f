// Package procsec hardens the primary's and the worker's own process against the shells they
// run, which share their user: it makes the process non-dumpable, so a shell cannot read the
// process's environment or memory through /proc (where a credential passed in the environment
// would otherwise be readable). Shells started afterwards are dumpable again (execve resets it).
//
// It does not isolate files: a shell running as the same user can read whatever that user can,
// including credential files. Run shells under a separate user or in a sandbox for that.
package procsec

import "golang.org/x/sys/unix"

// NonDumpable marks the calling process non-dumpable.
func NonDumpable() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}
