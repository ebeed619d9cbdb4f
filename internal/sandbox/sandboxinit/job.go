package sandboxinit

import (
	"bufio"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/turncli/turncli/internal/keyring"
	"github.com/turncli/turncli/internal/reaper/supervisor"
)

// job writes the identity, switches to the job's user and supervises its command.
func job(o options, hostPid int, start uint64, args []string) int {
	if o.uid <= 0 || o.gid <= 0 {
		return fail(ModeJob, "the job's user", syscall.EINVAL)
	}
	if o.idW >= 0 {
		if ok, err := claim(o.idW, o.idR, hostPid, start); err != nil {
			return fail(ModeJob, "write its identity", err)
		} else if !ok {
			return 0 // the launch was given up: the command never runs
		}
	}
	limits := []struct {
		res int
		val uint64
	}{{rlimitNproc, o.nproc}, {syscall.RLIMIT_FSIZE, o.fsize}, {syscall.RLIMIT_NOFILE, o.nofile}, {syscall.RLIMIT_CORE, 0}}
	for _, l := range limits {
		if l.val == 0 && l.res != syscall.RLIMIT_CORE {
			continue
		}
		if err := syscall.Setrlimit(l.res, &syscall.Rlimit{Cur: l.val, Max: l.val}); err != nil {
			return fail(ModeJob, "set a limit", err)
		}
	}
	drain, err := pipeOutput(o.uid, o.gid)
	if err != nil {
		return fail(ModeJob, "pipe the job's output", err)
	}
	if err := dropBoundingSet(); err != nil {
		return fail(ModeJob, "drop the bounding set", err)
	}
	// On this thread, which starts the job's command (see run): the job holds a keyring of
	// its own, not the primary's or a worker's.
	if err := keyring.JoinNew(); err != nil {
		return fail(ModeJob, "join a new session keyring", err)
	}
	// The supervisor runs as the job's user: it can signal the job's processes, which, inside
	// this namespace, can reach it only through the signals it handles (see supervisor).
	if err := syscall.Setgroups([]int{}); err != nil {
		return fail(ModeJob, "drop supplementary groups", err)
	}
	if err := syscall.Setresgid(o.gid, o.gid, o.gid); err != nil {
		return fail(ModeJob, "switch group", err)
	}
	if err := syscall.Setresuid(o.uid, o.uid, o.uid); err != nil {
		return fail(ModeJob, "switch user", err)
	}
	// Signals Go would end the process on, which the job (its user) may send it: handled, they
	// do nothing (the supervisor handles TERM, INT, QUIT and its kill request itself). Not
	// ignored: an ignored signal stays ignored in the programs the job execs.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGABRT, syscall.SIGTRAP, syscall.SIGSYS,
		syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM, syscall.SIGPIPE)
	return supervisor.SuperviseThen(args, drain)
}

// drainWait bounds how long the init copies output after the job's tree is gone: only a
// descendant that escaped it could still hold the pipe.
const drainWait = 2 * time.Second

// pipeOutput puts a pipe, the job's user's, between the job and its log (this process's
// standard output and error): the job may open its own output again by name (/dev/stderr)
// without truncating the log, which it can neither reach nor change. The returned function
// closes this process's ends and waits for the copy to finish.
func pipeOutput(uid, gid int) (drain func(), err error) {
	logFD, err := dupCloexec(1, 3)
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	if err := w.Chown(uid, gid); err != nil {
		return nil, err
	}
	for _, fd := range []int{1, 2} {
		if err := syscall.Dup3(int(w.Fd()), fd, 0); err != nil {
			return nil, err
		}
	}
	w.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		log := os.NewFile(uintptr(logFD), "log")
		_, _ = io.Copy(log, r)
	}()
	return func() {
		_ = syscall.Close(1)
		_ = syscall.Close(2)
		select {
		case <-done:
		case <-time.After(drainWait):
		}
	}, nil
}

// claim appends this process's identity to the identity file and reports whether it is the
// first line (see internal/jobproc's identity files); both descriptors are closed after.
func claim(w, r int, pid int, start uint64) (bool, error) {
	wf, rf := os.NewFile(uintptr(w), "identity"), os.NewFile(uintptr(r), "identity")
	defer wf.Close()
	defer rf.Close()
	me := strconv.Itoa(pid) + " " + strconv.FormatUint(start, 10)
	if _, err := wf.WriteString(me + "\n"); err != nil {
		return false, err
	}
	first, err := bufio.NewReader(rf).ReadString('\n')
	if err != nil {
		return false, err
	}
	return first == me+"\n", nil
}
