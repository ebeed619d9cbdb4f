package containment

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// host is this process's place in the cgroup hierarchy.
type host struct {
	commands string // this process's commands subtree, killed by the watchdog
	jobs     string // the jobs parent, shared by every process in the same cgroup
	next     atomic.Uint64
	watchdog *os.File // the write end of the watchdog's pipe; never closed

	// idle holds empty command leaves for reuse: creating and removing a cgroup costs more
	// than the rest of a command's containment together (BenchmarkCommandLeaf). The
	// watchdog removes them with the rest of the subtree.
	idleMu sync.Mutex
	idle   []*Leaf
}

// maxIdleLeaves bounds the idle leaves: enough for the commands that finish together on a
// busy host, few enough that their directories and descriptors cost nothing worth counting.
const maxIdleLeaves = 64

// takeIdle returns an idle leaf, or nil when there is none.
func (h *host) takeIdle() *Leaf {
	h.idleMu.Lock()
	defer h.idleMu.Unlock()
	n := len(h.idle)
	if n == 0 {
		return nil
	}
	l := h.idle[n-1]
	h.idle = h.idle[:n-1]
	return l
}

// putIdle keeps an empty leaf, with its descriptor, for the next command; false when there
// are enough already.
func (h *host) putIdle(l *Leaf) bool {
	if l.fd < 0 {
		return false
	}
	h.idleMu.Lock()
	defer h.idleMu.Unlock()
	if len(h.idle) == maxIdleLeaves {
		return false
	}
	h.idle = append(h.idle, l)
	return true
}

var (
	hostOnce sync.Once
	theHost  *host
	hostErr  error
)

// current returns this process's host, set up on first use; nil with the reason when the
// system offers no usable cgroup v2 hierarchy.
func current() (*host, error) {
	hostOnce.Do(func() {
		if os.Getenv(DisableEnv) != "" {
			hostErr = fmt.Errorf("containment: disabled by %s", DisableEnv)
			return
		}
		theHost, hostErr = setUp()
	})
	return theHost, hostErr
}

// DisableEnv, when set to anything, turns containment off for the process (for hosts whose
// cgroup hierarchy must not be touched); commands then fall back to process groups.
const DisableEnv = "TURNCLI_NO_CGROUPS"

// Available reports whether commands and jobs run in cgroup leaves here, and why not.
func Available() error {
	_, err := current()
	return err
}

func setUp() (*host, error) {
	mount, err := cgroup2Mount()
	if err != nil {
		return nil, err
	}
	own, err := ownCgroup()
	if err != nil {
		return nil, err
	}
	base := filepath.Join(mount, own)
	h := &host{
		commands: filepath.Join(base, "turncli."+strconv.Itoa(os.Getpid())+".commands"),
		jobs:     filepath.Join(base, "turncli.jobs"),
	}
	// A pid is reused only after its process is gone, so a directory of this name is a
	// leftover whose watchdog has not finished yet, or died: clear it and take it over.
	_ = killTree(h.commands)
	if err := os.Mkdir(h.commands, 0o755); err != nil {
		return nil, fmt.Errorf("containment: create %s: %w", h.commands, err)
	}
	if err := os.Mkdir(h.jobs, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		_ = os.Remove(h.commands)
		return nil, fmt.Errorf("containment: create %s: %w", h.jobs, err)
	}
	// cgroup.kill exists in every non-root cgroup of a kernel that has it.
	if _, err := os.Stat(filepath.Join(h.commands, "cgroup.kill")); err != nil {
		_ = os.Remove(h.commands)
		return nil, fmt.Errorf("containment: the kernel has no cgroup.kill: %w", err)
	}
	w, err := startWatchdog(h.commands)
	if err != nil {
		_ = os.Remove(h.commands)
		return nil, err
	}
	h.watchdog = w
	return h, nil
}

// cgroup2Mount finds where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup on most
// systems, /sys/fs/cgroup/unified on hybrid ones).
func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("containment: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "36 35 0:30 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw": the fields after " - "
		// are the file system type, the source and the super options.
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields := strings.Fields(pre)
		if !ok || len(fields) < 5 || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		if fields[3] != "/" {
			continue // a bind mount of a subtree: its paths do not match /proc/self/cgroup
		}
		if strings.Contains(","+fields[5]+",", ",ro,") {
			return "", errors.New("containment: the cgroup2 file system is mounted read-only")
		}
		return fields[4], nil
	}
	return "", errors.New("containment: no cgroup2 file system is mounted")
}

// ownCgroup is this process's cgroup v2 path ("0::/path" in /proc/self/cgroup).
func ownCgroup() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("containment: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return p, nil
		}
	}
	return "", errors.New("containment: this process is in no cgroup v2 hierarchy")
}
