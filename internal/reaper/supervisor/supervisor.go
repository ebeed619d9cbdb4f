// Package supervisor is the supervisor process of internal/reaper: what a process started by
// reaper.Wrap does instead of the binary's main. It is a package of its own so that it imports
// next to nothing: a package's init runs only after those of its imports (and of the packages
// sorted before it that are ready), and every package initialised before it is time each
// command waits for.
package supervisor

import (
	"os"
	"os/signal"
	"runtime"
	"syscall"
)

// KillSignal asks a supervisor to kill its command's whole tree now: what SIGKILL is to a
// command without one (SIGKILL itself would kill the supervisor and leave the tree). It is
// SIGHUP because Go's default action for SIGHUP ends a process: sent before the supervisor is
// ready for it, it ends the supervisor, which has then started nothing.
const KillSignal = syscall.SIGHUP

// Argv0 is a supervisor's argv[0]: how init recognises one, and what ps shows.
const Argv0 = "turncli-reaper"

// prctl options and the sigprocmask operation, as in linux/prctl.h and asm/signal.h.
const (
	prSetPdeathsig      = 1
	prSetDumpable       = 4
	prSetChildSubreaper = 36
	sigUnblock          = 1
)

func prctl(option, arg uintptr) error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, option, arg, 0); errno != 0 {
		return errno
	}
	return nil
}

// fail reports on the command's stderr why the command could not run, as a shell would.
func fail(msg string, err error, code int) int {
	_, _ = os.Stderr.WriteString(Argv0 + ": " + msg + ": " + err.Error() + "\n")
	return code
}

// init turns a process started by reaper.Wrap into a supervisor before anything else of the binary
// runs; it never returns to the binary. Any other process goes on as usual.
func init() {
	if len(os.Args) < 5 || os.Args[0] != Argv0 {
		return
	}
	os.Exit(Supervise(os.Args[1:]))
}

// Supervise runs the command described by args (as reaper.Wrap wrote them: the parent to die with or
// 0, the number of descriptors above 2 to hand on, the path, then the command's argv) until it
// ends, kills everything the command left, and returns the command's exit code; a command that
// died of a signal makes the supervisor die of the same signal instead.
//
// A sandbox's init (internal/sandbox/sandboxinit) calls it once it has built the sandbox and
// dropped its privileges, so a job's tree is held the same way inside a sandbox as outside.
func Supervise(args []string) int { return SuperviseThen(args, func() {}) }

// SuperviseThen is Supervise, calling beforeExit once the command's tree is gone and before the
// supervisor exits as the command did (which, for a command killed by a signal, is dying of it
// on the spot).
func SuperviseThen(args []string, beforeExit func()) int {
	// The command's parent-death signal is tied to the thread that starts it, not to the process;
	// this one then never exits before the process does.
	runtime.LockOSThread()
	parent, ok1 := atoi(args[0])
	extra, ok2 := atoi(args[1])
	if !ok1 || !ok2 {
		return fail("arguments", syscall.EINVAL, 126)
	}
	path, argv := args[2], args[3:]

	// Every signal is caught before any could need handling: a kill request or the parent's
	// death now reaches the loop below instead of ending the supervisor on the spot.
	forward := make(chan os.Signal, 4)
	signal.Notify(forward, syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT)
	kill := make(chan os.Signal, 1) // one pending request is as good as many
	signal.Notify(kill, KillSignal)
	exited := make(chan os.Signal, 1) // reaping is level-triggered: one pending SIGCHLD is enough
	signal.Notify(exited, syscall.SIGCHLD)

	if err := prctl(prSetChildSubreaper, 1); err != nil {
		return fail("become a subreaper", err, 126)
	}
	// The command runs as the same user: it may signal its supervisor, but not trace it.
	_ = prctl(prSetDumpable, 0)
	if parent > 0 {
		// reaper.Wrap's caller set SIGKILL as the parent-death signal, for while nothing here could
		// clean up; now it can, the parent's death becomes a kill request. The parent may have
		// died before this: then nothing is started.
		if err := prctl(prSetPdeathsig, uintptr(KillSignal)); err != nil {
			return fail("set the parent-death signal", err, 126)
		}
		if os.Getppid() != parent {
			raise(syscall.SIGKILL)
		}
	}

	files := make([]uintptr, 3+extra)
	for i := range files {
		files[i] = uintptr(i)
	}
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   os.Environ(), // the command's own: reaper.Wrap's caller gave it to the supervisor
		Files: files,
		// Its own group, so forwarded signals reach what it starts, as they would without a
		// supervisor; and it dies if the supervisor does.
		Sys: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		if err == syscall.ENOENT {
			return fail(path, err, 127)
		}
		return fail(path, err, 126)
	}

	t := &tree{cmd: pid}
	for !t.done {
		select {
		case <-exited:
			t.reap()
		case <-kill:
			t.killAll()
			beforeExit()
			return exitAs(t)
		case sig := <-forward:
			// The command is not reaped yet (t.done is false), so its group id is still its own.
			_ = syscall.Kill(-pid, sig.(syscall.Signal))
		}
	}
	t.killAll()
	beforeExit()
	return exitAs(t)
}
