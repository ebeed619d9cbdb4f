// Package keyring gives what a thread starts a session keyring of its own.
//
// A session keyring is part of a thread's credentials: what the thread starts inherits it,
// and holding it (possession) grants full rights over the keys in it, whatever user the child
// then runs as. Every shell the primary or a worker starts would otherwise share the one
// session keyring of the process (a systemd service's, or a login's): one agent could read,
// replace or clear the keys another stored there, and pass data to another sandbox through
// it. The thread that starts a shell or a job therefore joins a new, anonymous session keyring
// first, which only what it then starts holds.
package keyring

import "syscall"

// From linux/keyctl.h. The package uses only the syscall package, so that a sandbox's init,
// which imports it, starts fast (see sandboxinit).
const (
	keyctlGetKeyringID       = 0
	keyctlJoinSessionKeyring = 1
	keySpecSessionKeyring    = ^uintptr(2) // -3
)

// JoinNew makes the calling thread's session keyring a new, anonymous one; the caller locks
// its goroutine to the thread (runtime.LockOSThread) that starts what should hold it. Where
// this process may not use keyrings at all (a seccomp filter, as container runtimes' default
// profiles have, refuses keyctl with EPERM or ENOSYS), it does nothing: that filter holds for
// every child too.
func JoinNew() error {
	// A NULL name makes an anonymous keyring; any name, even "", would join a keyring of that
	// name another thread may hold.
	_, _, errno := syscall.RawSyscall(syscall.SYS_KEYCTL, keyctlJoinSessionKeyring, 0, 0)
	switch errno {
	case 0, syscall.ENOSYS, syscall.EPERM:
		return nil
	default:
		return errno
	}
}

// SessionID is the serial number of the calling thread's session keyring, as /proc/keys
// shows it (in hex); one is made when the thread has none. An error means this process may
// not use keyrings.
func SessionID() (int32, error) {
	id, _, errno := syscall.RawSyscall(syscall.SYS_KEYCTL, keyctlGetKeyringID, keySpecSessionKeyring, 1)
	if errno != 0 {
		return 0, errno
	}
	return int32(id), nil
}
