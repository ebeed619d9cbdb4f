package supervisor

import (
	"os"
	"syscall"
	"unsafe"
)

// exitAs returns the command's exit code for the supervisor to exit with; when the command
// died of a signal, the supervisor dies of the same one instead, so its parent's wait status
// reads exactly as the command's would have. A command never reaped (stuck past killWait)
// counts as killed.
func exitAs(t *tree) int {
	if !t.done {
		raise(syscall.SIGKILL)
	}
	if t.status.Signaled() {
		raise(t.status.Signal())
		return 128 + int(t.status.Signal()) // only a signal that cannot kill gets here
	}
	return t.status.ExitStatus()
}

// raise kills this process with sig. Go's runtime handles most signals itself (a stack dump
// for SIGQUIT, a panic for SIGSEGV, nothing for SIGUSR1), so the signal's default action is
// restored first, on the raw system call, and it is sent to this thread with nothing blocking
// it. A core dump is never written: the supervisor is not the process that crashed.
func raise(sig syscall.Signal) {
	if sig != syscall.SIGKILL {
		_ = syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
		// The kernel's struct sigaction: SIG_DFL (0), no flags, no restorer, an empty mask.
		var dfl [4]uint64
		syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&dfl)), 0, 8, 0, 0)
		set := uint64(1) << (sig - 1)
		syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, sigUnblock, uintptr(unsafe.Pointer(&set)), 0, 8, 0, 0)
	}
	_ = syscall.Tgkill(os.Getpid(), syscall.Gettid(), sig)
}
