package bashexec

import (
	"errors"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// signalGroup sends sig to every process in the process group pgid. A group that is already
// empty is not an error.
func signalGroup(pgid int, sig syscall.Signal) error {
	err := syscall.Kill(-pgid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// stopGroup asks the group to stop with SIGTERM and, if its leader has not exited after grace,
// kills the group with kill (SIGKILL, or a supervisor's kill request). It returns once the
// leader has exited.
func stopGroup(pgid int, grace time.Duration, kill syscall.Signal, exited <-chan struct{}) {
	_ = signalGroup(pgid, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-exited:
	case <-t.C:
		_ = signalGroup(pgid, kill)
		<-exited
	}
}

// awaitExit blocks until the child pid has exited, without reaping it (WNOWAIT). While the
// exited leader stays a zombie its pid, and so its process group id, cannot be reused, which
// makes every signal Run sends to -pid reach this command's group and no other. os/exec reaps
// the child afterwards in cmd.Wait.
func awaitExit(pid int) {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			// nil, or ECHILD if something else reaped it: either way it has exited.
			return
		}
	}
}
