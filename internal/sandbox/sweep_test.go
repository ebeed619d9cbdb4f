package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestSweepRemovesTheGroupsOfProcessesThatAreGone: the groups a dead process left, gathered
// under turncli.sandboxes/ and (cpu) beside it, are removed; a living process's and a job's stay.
func TestSweepRemovesTheGroupsOfProcessesThatAreGone(t *testing.T) {
	if len(cgroupHost()) == 0 {
		t.Skipf("%s", cgroupHost().describe())
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead := strconv.Itoa(gone.Process.Pid) + ".1"
	living := strconv.Itoa(os.Getpid()) + ".999999"
	job := jobGroup(t.Name())
	var deadDirs, keptDirs []string
	for c, base := range cgroupHost() {
		for _, name := range []string{dead, living, job} {
			dir := groupDir(c, base, name)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.Remove(dir) })
			if name == dead {
				deadDirs = append(deadDirs, dir)
			} else {
				keptDirs = append(keptDirs, dir)
			}
		}
	}
	Sweep()
	for _, dir := range deadDirs {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s stayed after Sweep (%v)", dir, err)
		}
	}
	for _, dir := range keptDirs {
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(dir), err)
		}
	}
}
