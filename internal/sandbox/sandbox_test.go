package sandbox_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turncli/turncli/internal/sandbox"
	"github.com/turncli/turncli/internal/sandbox/mountview"
	"github.com/turncli/turncli/internal/shellpriv"
)

// runIn runs script in sb as uid:gid and returns its combined output and exit code.
func runIn(t *testing.T, sb *sandbox.Sandbox, id uint32, dir, script string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	cmd := &exec.Cmd{Path: "/bin/bash", Args: []string{"bash", "--noprofile", "--norc", "-c", script},
		Env: []string{"PATH=/usr/bin:/bin", "HOME=" + dir}, Dir: dir, Stdout: &out, Stderr: &out}
	if err := shellpriv.StartIn(cmd, &shellpriv.User{Uid: id, Gid: id}, sb.Join); err != nil {
		t.Fatalf("start: %v", err)
	}
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	return out.String(), code
}

func requireSandboxes(t *testing.T) {
	t.Helper()
	if s := sandbox.Detect(); !s.Namespaces {
		t.Skipf("no sandboxes here: %s", s.Reason)
	}
}

func TestACommandSeesOnlyItsSandbox(t *testing.T) {
	requireSandboxes(t)
	home := t.TempDir() // 0700, as root's home is
	state := filepath.Join(home, "state")
	wsA, wsB := filepath.Join(state, "workspaces", "a"), filepath.Join(state, "workspaces", "b")
	for _, d := range []string{wsA, wsB} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(state, "secret"), []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	const idA = 2_000_101
	if err := os.Chown(wsA, idA, idA); err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.Start(mountview.View{Hide: []string{state}, Workspace: wsA}, sandbox.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })

	for _, c := range []struct{ name, script, want string }{
		{"WorkspaceIsWritable", "echo hi > f && cat f && pwd", "hi\n" + wsA + "\n"},
		{"OnlyItsOwnProcessesAreListed", "ls /proc | grep -c '^[0-9]'", ""},
		{"TheStateIsAbsent", "ls -A " + state + "; cat " + state + "/secret 2>&1 | sed 's/.*: //'", "workspaces\nNo such file or directory\n"},
		{"OtherWorkspacesAreAbsent", "ls " + state + "/workspaces", "a\n"},
		{"TheRootIsReadOnly", "touch /usr/x 2>&1 | sed 's/.*: //'", "Read-only file system\n"},
		{"TmpIsWritable", "echo y > /tmp/y && cat /tmp/y", "y\n"},
		{"TheInitHoldsNoCapabilityOnAnyThread", "cat /proc/1/task/*/status | grep -E '^(CapEff|CapPrm|Uid)' | sort -u | tr -s '\t' ' '",
			"CapEff: 0000000000000000\nCapPrm: 0000000000000000\nUid: 65534 65534 65534 65534\n"},
		{"TheInitCannotBeSignalled", "kill -TERM 1 2>&1 | sed 's/.* - //'", "Operation not permitted\n"},
		{"ControlGroupsAreHidden", "ls -A /sys/fs/cgroup | wc -l", "0\n"},
		{"NoSetUIDProgramGainsAnything", "su -c id root </dev/null 2>&1 | grep -c uid=0", "0\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, _ := runIn(t, sb, idA, wsA, c.script)
			if c.want != "" && out != c.want {
				t.Fatalf("got %q, want %q", out, c.want)
			}
			if c.name == "OnlyItsOwnProcessesAreListed" && strings.TrimSpace(out) > "4" {
				t.Fatalf("%s processes listed", out)
			}
		})
	}
}

func TestTwoSandboxesCannotReachEachOther(t *testing.T) {
	requireSandboxes(t)
	state := filepath.Join(t.TempDir(), "state")
	const idA, idB = 2_000_201, 2_000_202
	ws := map[uint32]string{idA: filepath.Join(state, "workspaces", "a"), idB: filepath.Join(state, "workspaces", "b")}
	boxes := map[uint32]*sandbox.Sandbox{}
	for id, dir := range ws {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, int(id), int(id)); err != nil {
			t.Fatal(err)
		}
		sb, err := sandbox.Start(mountview.View{Hide: []string{state}, Workspace: dir}, sandbox.DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sb.Close() })
		boxes[id] = sb
	}
	// B leaves a process running and a file in its /tmp.
	sleeper := &exec.Cmd{Path: "/bin/sleep", Args: []string{"sleep", "41337"}, Env: []string{}, Dir: ws[idB]}
	if err := shellpriv.StartIn(sleeper, &shellpriv.User{Uid: idB, Gid: idB}, boxes[idB].Join); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	// Reaped meanwhile: a PID namespace's init ends only once its processes are reaped, and this
	// one is the test's child.
	go func() { waited <- sleeper.Wait() }()
	if out, _ := runIn(t, boxes[idB], idB, ws[idB], "echo b > /tmp/b; pgrep -xc sleep"); out != "1\n" {
		t.Fatalf("B does not see its own sleeper: %q", out)
	}
	probe := fmt.Sprintf(`pgrep -xc sleep; cat /tmp/b 2>&1 | sed 's/.*: //'; kill -0 %d 2>&1 | sed 's/.* - //'; ls %s 2>&1 | sed 's/.*: //'`,
		sleeper.Process.Pid, ws[idB])
	out, _ := runIn(t, boxes[idA], idA, ws[idA], probe)
	if want := "0\nNo such file or directory\nNo such process\nNo such file or directory\n"; out != want {
		t.Fatalf("from A: %q, want %q", out, want)
	}
	// Closing B's sandbox ends what runs in it.
	if err := boxes[idB].Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("B's sleeper after its sandbox closed: %v", err)
	}
}

// TestClosingOneSandboxLeavesAnotherWhole: two sandboxes of one process (a primary's and its
// in-process worker's, say) have control groups of their own, so closing one does not remove
// the other's.
func TestClosingOneSandboxLeavesAnotherWhole(t *testing.T) {
	requireSandboxes(t)
	dir := t.TempDir()
	first, err := sandbox.Start(mountview.View{Workspace: dir}, sandbox.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	second, err := sandbox.Start(mountview.View{Workspace: dir}, sandbox.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = second.Close() })
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if out, code := runIn(t, second, 2_000_301, dir, "echo alive"); out != "alive\n" || code != 0 {
		t.Fatalf("the second sandbox after the first closed: %q, exit %d", out, code)
	}
}
