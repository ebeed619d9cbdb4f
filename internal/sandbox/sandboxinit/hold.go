package sandboxinit

import (
	"os"
	"os/signal"
	"syscall"
)

// shellSignals are the signals a process in the sandbox could send its init and that Go would
// otherwise act on. Ignored, they are not delivered at all: the kernel drops a signal from
// inside a PID namespace that its init has no handler for.
var shellSignals = []os.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGPIPE, syscall.SIGALRM, syscall.SIGTSTP,
	syscall.SIGTTIN, syscall.SIGTTOU, syscall.SIGABRT, syscall.SIGTRAP, syscall.SIGSYS}

// holdID is the user and group a holding init runs as: the overflow id, which no shell of the
// sandbox runs as, so none can signal or trace it.
const holdID = 65534

// hold keeps the sandbox until standard input ends, reaping every process orphaned to it.
func hold() int {
	signal.Ignore(shellSignals...)
	if err := dropBoundingSet(); err != nil {
		return fail(ModeHold, "drop the bounding set", err)
	}
	children := make(chan os.Signal, 1)
	signal.Notify(children, syscall.SIGCHLD)
	if _, err := os.Stdout.WriteString(Ready + "\n"); err != nil {
		return 1
	}
	// The starter opens this process's namespaces, then writes a byte: only then does this
	// process change its user and become non-dumpable, either of which would have taken the
	// starter the privilege to trace it. No shell runs in the sandbox before.
	var ack [1]byte
	if _, err := os.Stdin.Read(ack[:]); err != nil {
		return 0
	}
	// Every thread gives up root and with it every capability (Go applies set*id to all of
	// the process's threads; capset would change only this one).
	if err := syscall.Setgroups([]int{}); err != nil {
		return fail(ModeHold, "drop supplementary groups", err)
	}
	if err := syscall.Setresgid(holdID, holdID, holdID); err != nil {
		return fail(ModeHold, "switch group", err)
	}
	if err := syscall.Setresuid(holdID, holdID, holdID); err != nil {
		return fail(ModeHold, "switch user", err)
	}
	_ = prctl(prSetDumpable, 0, 0)
	ended := make(chan struct{})
	go func() {
		var b [64]byte
		for {
			if _, err := os.Stdin.Read(b[:]); err != nil {
				close(ended)
				return
			}
		}
	}()
	for {
		select {
		case <-children:
			reapAll()
		case <-ended:
			return 0 // the kernel kills the rest of the namespace
		}
	}
}

func reapAll() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
	}
}
