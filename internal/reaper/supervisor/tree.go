package supervisor

import (
	"os"
	"syscall"
	"time"
)

// killWait bounds how long killAll keeps killing: SIGKILL cannot be caught, so only a process
// stuck in the kernel (uninterruptible I/O) outlasts it, and the supervisor then leaves it.
const killWait = 5 * time.Second

// tree is the supervisor's view of its descendants.
type tree struct {
	cmd    int // the command's process
	done   bool
	status syscall.WaitStatus // the command's, once done
}

// reap collects every child that has exited, noting the command's status, and reports whether
// any child is left. As a subreaper the supervisor inherits every orphaned descendant, so no
// child left means no descendant left.
func (t *tree) reap() (left bool) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case err == syscall.EINTR:
		case err != nil: // ECHILD
			return false
		case pid == 0:
			return true
		case pid == t.cmd:
			t.status, t.done = ws, true
		}
	}
}

// killAll SIGKILLs every descendant and reaps them until none is left. Processes forked while
// it works are found on the next round: their parent's death makes them the supervisor's
// children.
func (t *tree) killAll() {
	deadline := time.Now().Add(killWait)
	for wait := 50 * time.Microsecond; t.reap(); wait = min(2*wait, 10*time.Millisecond) {
		if time.Now().After(deadline) {
			return
		}
		for _, pid := range descendants() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(wait)
	}
}

// descendants lists this process's descendants, parents before their children. It follows the
// children files /proc keeps per thread, or, on a kernel built without them, the parent of
// every process in /proc.
func descendants() []int {
	if _, err := os.Stat("/proc/thread-self/children"); err != nil {
		return descendantsByScan()
	}
	var out []int
	seen := map[int]bool{}
	for next := childrenOf(os.Getpid()); len(next) > 0; {
		pid := next[0]
		next = next[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		out = append(out, pid)
		next = append(next, childrenOf(pid)...)
	}
	return out
}

// childrenOf lists the children of every thread of pid; none when pid is gone.
func childrenOf(pid int) []int {
	dir := "/proc/" + itoa(pid) + "/task/"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var kids []int
	for _, task := range tasks {
		b, err := os.ReadFile(dir + task.Name() + "/children")
		if err != nil {
			continue
		}
		kids = append(kids, numbers(b)...)
	}
	return kids
}

// descendantsByScan reads the parent of every process in /proc and walks down from this one.
func descendantsByScan() []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, ok := atoi(e.Name())
		if !ok {
			continue
		}
		if ppid, ok := parentOf(pid); ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	var out []int
	seen := map[int]bool{}
	for next := children[os.Getpid()]; len(next) > 0; {
		pid := next[0]
		next = next[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		out = append(out, pid)
		next = append(next, children[pid]...)
	}
	return out
}

// parentOf reads the parent pid from /proc/<pid>/stat: the second field after the command
// name, which is in parentheses and may itself hold spaces and parentheses.
func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	end := len(b) - 1
	for end >= 0 && b[end] != ')' {
		end--
	}
	// After the name: the state (a letter), then the parent pid.
	if f := numbers(b[end+1:]); len(f) > 0 {
		return f[0], true
	}
	return 0, false
}

// numbers returns the decimal numbers among the space-separated fields of b, in order; other
// fields are skipped. (strconv and strings are not imported: see the package comment.)
func numbers(b []byte) []int {
	var out []int
	start := -1
	for i := 0; i <= len(b); i++ {
		if i < len(b) && b[i] != ' ' && b[i] != '\n' {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			if n, ok := atoi(string(b[start:i])); ok {
				out = append(out, n)
			}
			start = -1
		}
	}
	return out
}

// atoi parses a non-negative decimal number that fits an int.
func atoi(s string) (int, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for ; n > 0; n /= 10 {
		i--
		b[i] = byte('0' + n%10)
	}
	return string(b[i:])
}
