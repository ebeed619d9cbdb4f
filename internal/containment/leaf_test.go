package containment

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
)

// TestAFinishedCommandsLeafServesTheNext: the leaf of a command that left nothing behind
// serves the next command, which starts in it; a leaf that had to be killed is not reused
// (see Leaf.killed), and the command after it starts in a fresh leaf.
func TestAFinishedCommandsLeafServesTheNext(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
	first, err := NewCommand()
	if err != nil {
		t.Fatal(err)
	}
	if err := startIn(t, first, "true").Wait(); err != nil {
		t.Fatal(err)
	}
	if err := first.Remove(); err != nil {
		t.Fatal(err)
	}

	second, err := NewCommand()
	if err != nil {
		t.Fatal(err)
	}
	if second.dir != first.dir {
		t.Fatalf("the next command got a new leaf %s, not the idle %s", second.dir, first.dir)
	}
	sleeper := startIn(t, second, "sleep", "300")
	requireOnlyIn(t, second, sleeper)
	if err := second.Remove(); err != nil {
		t.Fatal(err)
	}
	_ = sleeper.Wait()
	if ws := sleeper.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the process left in the leaf ended with %v, not SIGKILL", sleeper.ProcessState)
	}

	third, err := NewCommand()
	if err != nil {
		t.Fatal(err)
	}
	defer third.Remove()
	if third.dir == second.dir {
		t.Fatal("a leaf that was killed was reused")
	}
	requireOnlyIn(t, third, startIn(t, third, "sleep", "300"))
}

// requireOnlyIn fails unless cmd's process, alive, is the only one in l.
func requireOnlyIn(t *testing.T, l *Leaf, cmd *exec.Cmd) {
	t.Helper()
	procs, err := os.ReadFile(l.dir + "/cgroup.procs")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(procs), strconv.Itoa(cmd.Process.Pid)+"\n"; got != want {
		t.Fatalf("the leaf holds %q, want only the command's process %q", got, want)
	}
}

// TestIdleLeavesAreBounded: past maxIdleLeaves, a leaf given back is removed.
func TestIdleLeavesAreBounded(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
	leaves := make([]*Leaf, maxIdleLeaves+1)
	for i := range leaves {
		l, err := NewCommand()
		if err != nil {
			t.Fatal(err)
		}
		leaves[i] = l
	}
	for _, l := range leaves {
		if err := l.Remove(); err != nil {
			t.Fatal(err)
		}
	}
	last := leaves[len(leaves)-1]
	if _, err := os.Stat(last.dir); !os.IsNotExist(err) {
		t.Fatalf("the leaf given back past %d idle ones still exists (stat: %v)", maxIdleLeaves, err)
	}
	if last.fd != -1 {
		t.Fatal("the removed leaf kept its descriptor")
	}
	for _, l := range leaves[:maxIdleLeaves] {
		if _, err := os.Stat(l.dir); err != nil {
			t.Fatalf("idle leaf: %v", err)
		}
	}
}

func startIn(t *testing.T, l *Leaf, name string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	l.Apply(cmd.SysProcAttr)
	err := cmd.Start()
	l.Started()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd
}
