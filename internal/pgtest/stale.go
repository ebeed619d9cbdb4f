package pgtest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A cluster's directory outlives a test binary that was killed (a timeout, ^C): its server dies
// with the binary, but a test cluster's data stays in memory (/dev/shm) until someone removes
// it, a gigabyte or more each. So every directory names the process that made it, and Start
// removes those whose maker is gone.

// ownerFile, in a cluster's directory, holds its maker's pid and start time (in clock ticks
// since boot): the two together tell a live maker from a dead one whose pid was reused.
const ownerFile = "owner"

// writeOwner records this process as dir's maker.
func writeOwner(dir string) error {
	start, err := processStart(os.Getpid())
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ownerFile), fmt.Appendf(nil, "%d %s\n", os.Getpid(), start), 0o644)
}

// removeOrphans removes the cluster directories in base whose maker has exited. A directory
// without an owner file is left alone: it is being made, or was made before owners were
// recorded. Failures are ignored: another user's directory is theirs to remove.
func removeOrphans(base string) {
	dirs, _ := filepath.Glob(filepath.Join(base, "pgtest-*"))
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue
		}
		pid, start, ok := strings.Cut(string(bytes.TrimSpace(data)), " ")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil {
			continue
		}
		if now, err := processStart(n); err == nil && now == start {
			continue // its maker is alive
		}
		_ = os.RemoveAll(dir)
	}
}

// processStart is the start time of process pid, field 22 of /proc/<pid>/stat; an error when
// there is no such process.
func processStart(pid int) (string, error) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", err
	}
	// The command name (field 2) is in parentheses and may hold spaces: count from after it.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return "", fmt.Errorf("pgtest: unexpected /proc/%d/stat", pid)
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 20 {
		return "", fmt.Errorf("pgtest: unexpected /proc/%d/stat", pid)
	}
	return fields[19], nil // field 22 is the 20th after the name
}
