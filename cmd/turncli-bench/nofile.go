package main

import (
	"os"
	"syscall"
)

// waitsFDReserve is the descriptors the harness process keeps free beside the long polls'
// connections: the admission clients' connections (both ends live in this process), the
// waiters child's pipes, and whatever the runtime and the primary open meanwhile.
const waitsFDReserve = 256

// raiseNoFile raises this process's RLIMIT_NOFILE soft limit to want, raising the hard limit
// too where the process may (CAP_SYS_RESOURCE), else to the hard limit. It returns the soft
// limit in force and the hard limit as it was found.
func raiseNoFile(want uint64) (soft, hard uint64, err error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, 0, err
	}
	hard = lim.Max
	if lim.Cur >= want {
		return lim.Cur, hard, nil
	}
	if lim.Max < want {
		// Refused without CAP_SYS_RESOURCE; then the hard limit is as far as it goes.
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: want, Max: want}) == nil {
			return want, hard, nil
		}
	}
	lim.Cur = min(want, lim.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, 0, err
	}
	return lim.Cur, hard, nil
}

// waitsThatFit is how many long polls, each holding one connection in this process, fit under
// the soft limit beside the descriptors open now and the reserve: want, or fewer in hundreds.
func waitsThatFit(want int, soft uint64) int {
	room := int(soft) - openFDs() - waitsFDReserve
	if room >= want {
		return want
	}
	return max(room/100*100, 0)
}

// openFDs is the number of descriptors this process has open.
func openFDs() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	return len(entries)
}
