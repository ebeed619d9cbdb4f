package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// parentGroup is the control group, under this process's own in each hierarchy but cpu, that
// holds its sandboxes' groups.
const parentGroup = "turncli.sandboxes"

// cpuGroupPrefix begins the name of a sandbox's cpu group, which sits in this process's own
// group itself (groupDir says why).
const cpuGroupPrefix = "turncli.sandbox."

// groupDir is the directory of the group named name of controller c, whose hierarchy holds this
// process's own group at base.
//
// In cgroup v1 a group's cpu.shares weigh it against its siblings and against each task of its
// parent. A sandbox's cpu group under a common parent would share that parent's one weight with
// every other sandbox: 500 busy sandboxes together would get what one thread of the primary
// gets, and another program's single process as much as all of them, so their commands would
// wait seconds for a CPU. Beside this process's tasks, each sandbox weighs what Limits.CPUWeight
// says: an even share (at 100) against each other sandbox and each thread of this process. The
// pids and memory limits are each group's own wherever it sits; their groups stay gathered.
func groupDir(c, base, name string) string {
	if c == "cpu" {
		return filepath.Join(base, cpuGroupPrefix+name)
	}
	return filepath.Join(base, parentGroup, name)
}

// v1Controllers are the cgroup v1 controllers limits use, in the order they are joined.
var v1Controllers = []string{"pids", "memory", "cpu"}

// hostCgroups is where this process's cgroup v1 controllers are: controller → the directory of
// this process's own group.
type hostCgroups map[string]string

var cgroupHost = sync.OnceValue(func() hostCgroups {
	mounts := v1Mounts()
	own := ownGroups()
	h := hostCgroups{}
	for _, c := range v1Controllers {
		mnt, ok := mounts[c]
		path, ok2 := own[c]
		if !ok || !ok2 {
			continue
		}
		dir := filepath.Join(mnt, path)
		if unix.Access(dir, unix.W_OK) == nil {
			h[c] = dir
		}
	}
	return h
})

func (h hostCgroups) describe() string {
	var have []string
	for _, c := range v1Controllers {
		if _, ok := h[c]; ok {
			have = append(have, c)
		}
	}
	if len(have) == 0 {
		return "no writable cgroup v1 controller here (cgroup v2 controllers are not used): jobs are bounded by rlimits (the agent's processes, file size), commands only by the host's own limits"
	}
	return "cgroup v1 (" + strings.Join(have, ", ") + ")"
}

// v1Mounts maps each cgroup v1 controller to its mount point, from /proc/self/mountinfo.
func v1Mounts() map[string]string {
	out := map[string]string{}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(tail) < 3 || tail[0] != "cgroup" {
			continue
		}
		for _, opt := range strings.Split(tail[2], ",") {
			for _, c := range v1Controllers {
				if opt == c {
					out[c] = fields[4]
				}
			}
		}
	}
	return out
}

// ownGroups maps each cgroup v1 controller to this process's group path, from /proc/self/cgroup.
func ownGroups() map[string]string { return groupsOf("/proc/self/cgroup") }

func groupsOf(file string) map[string]string {
	out := map[string]string{}
	b, err := os.ReadFile(file)
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out
}

// cgroupSet is one sandbox's groups, one per controller. A nil set limits nothing.
type cgroupSet struct {
	dirs map[string]string // controller → the sandbox's group
	lim  Limits
}

// newCgroups makes the sandbox's groups and writes its limits. Where the host has no writable
// controller it returns a nil set.
func newCgroups(name string, lim Limits) (*cgroupSet, error) {
	host := cgroupHost()
	if len(host) == 0 || (lim.Processes == 0 && lim.MemoryBytes == 0 && lim.CPUWeight == 0) {
		return &cgroupSet{lim: lim}, nil
	}
	s := &cgroupSet{dirs: map[string]string{}, lim: lim}
	for _, c := range v1Controllers {
		base, ok := host[c]
		if !ok {
			continue
		}
		dir := groupDir(c, base, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			_ = s.remove()
			return nil, fmt.Errorf("sandbox: make its %s control group: %w", c, err)
		}
		s.dirs[c] = dir
		if err := s.write(c); err != nil {
			_ = s.remove()
			return nil, err
		}
	}
	return s, nil
}

// write sets controller c's limits.
func (s *cgroupSet) write(c string) error {
	dir := s.dirs[c]
	var files [][2]string
	switch c {
	case "pids":
		if s.lim.Processes > 0 {
			files = append(files, [2]string{"pids.max", strconv.Itoa(s.lim.Processes)})
		}
	case "memory":
		if s.lim.MemoryBytes > 0 {
			v := strconv.FormatInt(s.lim.MemoryBytes, 10)
			files = append(files, [2]string{"memory.limit_in_bytes", v})
			if _, err := os.Stat(filepath.Join(dir, "memory.memsw.limit_in_bytes")); err == nil {
				files = append(files, [2]string{"memory.memsw.limit_in_bytes", v}) // no escape to swap
			}
		}
	case "cpu":
		if s.lim.CPUWeight > 0 {
			// cpu.weight 100 is cpu.shares 1024, the default of either.
			files = append(files, [2]string{"cpu.shares", strconv.Itoa(max(2, s.lim.CPUWeight*1024/100))})
		}
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f[0]), []byte(f[1]), 0); err != nil {
			return fmt.Errorf("sandbox: set %s: %w", f[0], err)
		}
	}
	return nil
}

// enterThread moves the calling thread into every group of the set; the process it clones next
// starts there. The returned function moves the thread back.
func (s *cgroupSet) enterThread() (back func() error, err error) {
	if s == nil || len(s.dirs) == 0 {
		return func() error { return nil }, nil
	}
	tid := []byte(strconv.Itoa(unix.Gettid()))
	host := cgroupHost() // the spawner thread lives in the process's own groups between starts
	var moved []string
	back = func() error {
		var errs []error
		for _, c := range moved {
			errs = append(errs, os.WriteFile(filepath.Join(host[c], "tasks"), tid, 0))
		}
		return errors.Join(errs...)
	}
	for _, c := range v1Controllers {
		dir, ok := s.dirs[c]
		if !ok {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, "tasks"), tid, 0); err != nil {
			mustLeave(back)
			return nil, fmt.Errorf("sandbox: join its %s control group: %w", c, err)
		}
		moved = append(moved, c)
	}
	return back, nil
}

// procsFiles are the cgroup.procs files a job's init writes itself into.
func (s *cgroupSet) procsFiles() []string {
	var out []string
	for _, c := range v1Controllers {
		if dir, ok := s.dirs[c]; ok {
			out = append(out, filepath.Join(dir, "cgroup.procs"))
		}
	}
	return out
}

// events reads how often the limits were reached.
func (s *cgroupSet) events() Events {
	var e Events
	if s == nil {
		return e
	}
	if dir, ok := s.dirs["pids"]; ok {
		e.ProcessLimit = readCounter(filepath.Join(dir, "pids.events"), "max")
	}
	if dir, ok := s.dirs["memory"]; ok {
		e.OOMKills = readCounter(filepath.Join(dir, "memory.oom_control"), "oom_kill")
	}
	return e
}

func readCounter(file, key string) uint64 {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == key {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// remove deletes the groups once the processes in them are gone (the kernel takes a moment to
// finish killing a PID namespace).
func (s *cgroupSet) remove() error {
	if s == nil {
		return nil
	}
	var errs []error
	for _, dir := range s.dirs {
		var err error
		for wait := time.Millisecond; wait < 2*time.Second; wait *= 2 {
			if err = unix.Rmdir(dir); err == nil || errors.Is(err, unix.ENOENT) {
				err = nil
				break
			}
			time.Sleep(wait)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("sandbox: remove its control group %s: %w", dir, err))
		}
	}
	return errors.Join(errs...)
}

// Sweep removes the groups that a process which died left (its sandboxes', named "<pid>.<n>"
// under turncli.sandboxes/ and, for cpu, "turncli.sandbox.<pid>.<n>" beside it, when that pid
// no longer runs). The groups of living processes, which are empty between commands, and those
// of jobs, which their own records find, stay.
func Sweep() {
	for c, base := range cgroupHost() {
		sweepDir(filepath.Join(base, parentGroup), "")
		if c == "cpu" {
			sweepDir(base, cpuGroupPrefix)
		}
	}
}

// sweepDir removes the groups in dir whose names, after prefix, name a process that is gone.
func sweepDir(dir, prefix string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name, ours := strings.CutPrefix(e.Name(), prefix)
		if !ours || !e.IsDir() {
			continue
		}
		if pid, ok := ownerPid(name); ok && unix.Kill(pid, 0) == unix.ESRCH {
			_ = unix.Rmdir(filepath.Join(dir, e.Name())) // EBUSY while processes are in it
		}
	}
}

// ownerPid is the pid of the process whose sandbox a group's name says it is.
func ownerPid(name string) (int, bool) {
	pidText, _, _ := strings.Cut(name, ".")
	pid, err := strconv.Atoi(pidText)
	return pid, err == nil && pid > 0
}
