package sandboxinit

import (
	"bufio"
	"os"
	"strconv"
	"syscall"

	"github.com/turncli/turncli/internal/reaper/supervisor"
	"golang.org/x/sys/unix"
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
	}{{unix.RLIMIT_NPROC, o.nproc}, {unix.RLIMIT_FSIZE, o.fsize}, {unix.RLIMIT_CORE, 0}}
	for _, l := range limits {
		if l.val == 0 && l.res != unix.RLIMIT_CORE {
			continue
		}
		if err := unix.Setrlimit(l.res, &unix.Rlimit{Cur: l.val, Max: l.val}); err != nil {
			return fail(ModeJob, "set a limit", err)
		}
	}
	if err := dropBoundingSet(); err != nil {
		return fail(ModeJob, "drop the bounding set", err)
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
	return supervisor.Supervise(args)
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
