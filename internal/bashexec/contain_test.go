package bashexec

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/turncli/turncli/internal/containment"
)

// TestProcessesThatLeftTheGroupDoNotOutliveTheCommand: setsid takes a process out of the
// command's group and session; the command's cgroup leaf, or without one its supervisor, still
// holds it, so it dies with the command however the command ends. Run the package with
// TURNCLI_NO_CGROUPS=1 to test the supervisor.
func TestProcessesThatLeftTheGroupDoNotOutliveTheCommand(t *testing.T) {
	t.Parallel()
	requireSetsid(t)
	for _, tc := range []struct {
		name    string
		after   string
		timeout time.Duration
	}{
		{"CommandExits", `exit 3`, 0},
		{"CommandTimesOut", `sleep 100`, testTimeout},
		{"OutputDetachedFromPipes", `exit 0`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newPIDWatcher(t, 1, nil)
			redirect := ""
			if tc.name == "OutputDetachedFromPipes" {
				redirect = ">/dev/null 2>&1 </dev/null"
			}
			spec := testSpec(t, escapeScript(redirect, "")+tc.after)
			spec.Timeout, spec.Grace = tc.timeout, testGrace
			if _, err := Run(t.Context(), spec, w.output); err != nil {
				t.Fatalf("Run: %v", err)
			}
			w.requireAllExited()
		})
	}
}

// childEnv makes the test binary run one command through Run and never return (see TestMain):
// the test then kills that process as the primary or a worker might die.
const childEnv = "BASHEXEC_TEST_RUN_AND_HANG"

func runChildIfAsked() {
	script := os.Getenv(childEnv)
	if script == "" {
		return
	}
	dir, _ := os.Getwd()
	_, _ = Run(t0(), Spec{Script: script, Env: []string{"PATH=" + os.Getenv("PATH")}, Dir: dir}, nil)
	os.Exit(0)
}

// TestNothingOutlivesAKilledParent: the process running the command (the primary or a
// worker) is SIGKILLed and can clean up nothing; a grandchild that called setsid dies with it
// within two seconds: by the watchdog of its commands' cgroups, or, where there are none (the
// host has none, or TURNCLI_NO_CGROUPS is set), by the command's supervisor.
func TestNothingOutlivesAKilledParent(t *testing.T) {
	t.Parallel()
	requireSetsid(t)
	for _, tc := range []struct{ name, noCgroups string }{
		{"CgroupsWhereTheHostHasThem", ""},
		{"Supervisor", "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testKilledParent(t, tc.noCgroups)
		})
	}
}

func testKilledParent(t *testing.T, noCgroups string) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "escaped.pid")
	script := `setsid bash --noprofile --norc -c 'echo $$ >` + pidFile + `.tmp; mv ` + pidFile + `.tmp ` + pidFile + `; exec sleep 301' </dev/null >/dev/null 2>&1 & sleep 300`
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), childEnv+"="+script, containment.DisableEnv+"="+noCgroups)
	child.Dir = dir
	var stderr bytes.Buffer
	child.Stderr = &stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })

	pid := waitForPID(t, pidFile)
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("pidfd of the escaped grandchild %d: %v", pid, err)
	}
	defer unix.Close(fd)
	t.Cleanup(func() { _ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0) })
	if sid, _ := unix.Getsid(pid); sid != pid {
		t.Fatalf("the grandchild did not leave its session (sid %d, pid %d)", sid, pid)
	}

	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	killed := time.Now()
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 2000-int(time.Since(killed)/time.Millisecond))
		if err == unix.EINTR {
			continue
		}
		if n == 0 || err != nil {
			t.Fatalf("the setsid grandchild %d still runs 2 s after its parent was killed (poll: %v; child stderr %q)", pid, err, stderr.String())
		}
		return
	}
}

func waitForPID(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(exitBound)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("pid file %q: %v", b, err)
			}
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no pid in %s within %v", path, exitBound)
	return 0
}
