package supervisor

import (
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestBothWaysFindTheSameDescendants: the /proc scan, used where the kernel keeps no children
// files, finds what the children files find, grandchildren included.
func TestBothWaysFindTheSameDescendants(t *testing.T) {
	if _, err := os.Stat("/proc/thread-self/children"); err != nil {
		t.Skip("the kernel keeps no children files to compare with")
	}
	cmd := exec.Command("bash", "--noprofile", "--norc", "-c", "sleep 100 & (sleep 100 & wait) & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() }()
	var byChildren, byScan []int
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		byChildren, byScan = descendants(), descendantsByScan()
		// bash, its sleep, the subshell and its sleep.
		if len(byChildren) >= 4 && len(byScan) == len(byChildren) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tree never showed up: %v", byChildren)
		}
	}
	slices.Sort(byChildren)
	slices.Sort(byScan)
	if !slices.Equal(byChildren, byScan) || !slices.Contains(byScan, cmd.Process.Pid) {
		t.Errorf("children files found %v, the /proc scan %v; want the same, with bash %d", byChildren, byScan, cmd.Process.Pid)
	}
}

func TestNumbers(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
	}{
		{"", nil},
		{"12 345 6\n", []int{12, 345, 6}},
		{" S 1 2 x9 10", []int{1, 2, 10}},
		{"99999999999999999999 7", []int{7}},
	} {
		if got := numbers([]byte(tc.in)); !slices.Equal(got, tc.want) {
			t.Errorf("numbers(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
	for _, n := range []int{0, 7, 1234567890} {
		if got, ok := atoi(itoa(n)); !ok || got != n {
			t.Errorf("atoi(itoa(%d)) = %d, %v", n, got, ok)
		}
	}
}
