package sandboxinit

import (
	"syscall"
)

// What the syscall package lacks, from linux/prctl.h, linux/capability.h, linux/fcntl.h and
// asm/resource.h. The init uses no other system call package: a package is initialised only
// after every package it imports, and golang.org/x/sys sorts after most of the binary, so
// importing it would make every sandbox wait for them.
const (
	prSetDumpable        = 4
	prCapbsetDrop        = 24
	prSetNoNewPrivs      = 38
	prCapAmbient         = 47
	prCapAmbientClearAll = 4
	fDupfdCloexec        = 1030
	rlimitNproc          = 6
)

func prctl(option, arg2, arg3 uintptr) error {
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, option, arg2, arg3, 0, 0, 0); errno != 0 {
		return errno
	}
	return nil
}

// dupCloexec duplicates fd to the lowest free descriptor from min, close-on-exec.
func dupCloexec(fd, min int) (int, error) {
	nfd, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), fDupfdCloexec, uintptr(min))
	if errno != 0 {
		return -1, errno
	}
	return int(nfd), nil
}
