package containment

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Leaf is the cgroup of one command or job. A nil *Leaf (containment unavailable) does
// nothing, so callers need no second code path beyond their process-group fallback.
type Leaf struct {
	dir string
	fd  int // an O_PATH descriptor of dir for clone3's CLONE_INTO_CGROUP; -1 once closed
	// host is set on a command's leaf, which goes back to its host's idle leaves when the
	// command is done; a job's leaf is removed instead.
	host *host
	// killed: cgroup.kill was written. Such a leaf is never reused: on the kernels this runs
	// on (Linux 6.18 among them) a process cloned into a cgroup whose cgroup.kill was ever
	// written (CLONE_INTO_CGROUP) is SIGKILLed at birth.
	killed bool
}

// NewCommand returns an empty leaf for one command in this process's commands subtree, which
// the watchdog kills if this process dies: one a finished command gave back, or a new one. It
// returns nil, nil when containment is unavailable.
func NewCommand() (*Leaf, error) {
	h, err := current()
	if err != nil {
		return nil, nil // unavailable is not an error: callers fall back to process groups
	}
	if l := h.takeIdle(); l != nil {
		return l, nil
	}
	l, err := create(filepath.Join(h.commands, "c"+strconv.FormatUint(h.next.Add(1), 10)))
	if err != nil {
		return nil, err
	}
	l.host = h
	return l, nil
}

// ForJob returns the leaf of the job whose exit status goes to statusPath, creating it if
// needed: the same path always names the same leaf, so a later process finds a job's leaf
// again after a restart. A leaf left by an earlier launch of the same job (a crash between
// creating it and recording the job) is emptied first. nil, nil when unavailable.
func ForJob(statusPath string) (*Leaf, error) {
	h, err := current()
	if err != nil {
		return nil, nil // unavailable is not an error: callers fall back to process groups
	}
	return create(jobDir(h, statusPath))
}

// FindJob returns the leaf of the job whose exit status goes to statusPath if it exists,
// without creating one; nil when it does not or containment is unavailable.
func FindJob(statusPath string) *Leaf {
	h, err := current()
	if err != nil {
		return nil
	}
	dir := jobDir(h, statusPath)
	if _, err := os.Stat(dir); err != nil {
		return nil
	}
	return &Leaf{dir: dir, fd: -1}
}

func jobDir(h *host, statusPath string) string {
	abs, err := filepath.Abs(statusPath)
	if err != nil {
		abs = statusPath
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(h.jobs, "j"+hex.EncodeToString(sum[:12]))
}

func create(dir string) (*Leaf, error) {
	if err := os.Mkdir(dir, 0o755); errors.Is(err, os.ErrExist) {
		l := &Leaf{dir: dir, fd: -1}
		if err := l.Kill(); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, fmt.Errorf("containment: create %s: %w", dir, err)
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return nil, fmt.Errorf("containment: open %s: %w", dir, err)
	}
	return &Leaf{dir: dir, fd: fd}, nil
}

// Apply makes the process started with attr begin its life inside the leaf (clone3 with
// CLONE_INTO_CGROUP), so not even its first instruction runs outside it.
func (l *Leaf) Apply(attr *syscall.SysProcAttr) {
	if l == nil || l.fd < 0 {
		return
	}
	attr.UseCgroupFD = true
	attr.CgroupFD = l.fd
}

// Started releases the descriptor Apply used, once the process has started (or failed to).
// A command's leaf keeps it for the next command that reuses the leaf.
func (l *Leaf) Started() {
	if l == nil || l.host != nil {
		return
	}
	l.closeFD()
}

func (l *Leaf) closeFD() {
	if l.fd >= 0 {
		_ = unix.Close(l.fd)
		l.fd = -1
	}
}

// Signal sends sig to every process in the leaf: the command's whole tree, including those
// that left its process group.
func (l *Leaf) Signal(sig syscall.Signal) error {
	if l == nil {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(l.dir, "cgroup.procs"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("containment: %w", err)
	}
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			_ = syscall.Kill(pid, sig)
		}
	}
	return nil
}

// killWait bounds how long Kill waits for the kernel to empty a leaf: SIGKILL cannot be
// caught, so only a process stuck in the kernel (uninterruptible I/O) takes longer.
const killWait = 5 * time.Second

// Kill kills every process in the leaf and waits until the leaf is empty.
func (l *Leaf) Kill() error {
	if l == nil {
		return nil
	}
	killed, err := killLeaf(l.dir)
	l.killed = l.killed || killed
	return err
}

// Remove kills what is left in the leaf and gives it up: a command's leaf, now empty, goes
// back to the idle leaves for the next command; any other leaf is removed.
func (l *Leaf) Remove() error {
	if l == nil {
		return nil
	}
	if err := l.Kill(); err != nil {
		l.closeFD()
		return err
	}
	if l.host != nil && !l.killed && l.host.putIdle(l) {
		return nil
	}
	l.closeFD()
	if err := os.Remove(l.dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("containment: remove %s: %w", l.dir, err)
	}
	return nil
}

// Populated reports whether any process is left in the leaf.
func (l *Leaf) Populated() bool {
	if l == nil {
		return false
	}
	populated, err := isPopulated(l.dir)
	return err == nil && populated
}

// killLeaf kills every process in dir and waits until it is empty; killed reports whether
// it had to write cgroup.kill.
func killLeaf(dir string) (killed bool, err error) {
	if populated, err := isPopulated(dir); err != nil || !populated {
		return false, err // nothing left: the common case after a command, and no write needed
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("containment: kill %s: %w", dir, err)
	}
	deadline := time.Now().Add(killWait)
	for wait := 50 * time.Microsecond; ; wait = min(2*wait, 10*time.Millisecond) {
		populated, err := isPopulated(dir)
		if err != nil || !populated {
			return true, err
		}
		if time.Now().After(deadline) {
			return true, fmt.Errorf("containment: %s still has processes %v after SIGKILL", dir, killWait)
		}
		time.Sleep(wait)
	}
}

// killTree kills and removes dir and every leaf under it.
func killTree(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if _, err := killLeaf(dir); err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	return os.Remove(dir)
}

func isPopulated(dir string) (bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.events"))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("containment: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "populated "); ok {
			return v != "0", nil
		}
	}
	return false, fmt.Errorf("containment: %s/cgroup.events has no populated line", dir)
}
