package pgtest

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/turncli/turncli/internal/jobproc"
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
	start, err := jobproc.StartTime(os.Getpid())
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ownerFile), fmt.Appendf(nil, "%d %d\n", os.Getpid(), start), 0o644)
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
		var pid int
		var start uint64
		if _, err := fmt.Sscanf(string(data), "%d %d", &pid, &start); err != nil {
			continue
		}
		if !jobproc.Alive(pid, start) {
			_ = os.RemoveAll(dir)
		}
	}
}
