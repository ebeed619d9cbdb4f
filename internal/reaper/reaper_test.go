package reaper_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/turncli/turncli/internal/reaper"
)

// goneWithin is how long a process that must die with its command may take: the bound the
// containment promises.
const goneWithin = 2 * time.Second

// parentEnv makes the test binary start one wrapped command and hang until it is killed (see
// TestMain), as a primary or worker running a command might be killed.
const parentEnv = "REAPER_TEST_PARENT"

func TestMain(m *testing.M) {
	if script := os.Getenv(parentEnv); script != "" {
		cmd := exec.Command("bash", "--noprofile", "--norc", "-c", script)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		detached := os.Getenv(parentEnv+"_DETACHED") != ""
		if !detached {
			cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
		}
		if err := reaper.Wrap(cmd, !detached); err != nil {
			panic(err)
		}
		if err := cmd.Start(); err != nil {
			panic(err)
		}
		os.Stdout.WriteString(strconv.Itoa(cmd.Process.Pid) + "\n")
		for {
			time.Sleep(time.Hour) // until killed
		}
	}
	os.Exit(m.Run())
}

func bash(t *testing.T, script string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("bash", "--noprofile", "--norc", "-c", script)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	cmd.Dir = t.TempDir()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := reaper.Wrap(cmd, true); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// escapee is a script that starts a process in a new session (outside the command's session
// and process group) and writes its pid to file once it has left; the command then writes
// "ready" in its working directory (a builtin, no child) and goes on with rest.
func escapee(t *testing.T, file, rest string) string {
	t.Helper()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid(1) not installed; it is how a test process leaves the group")
	}
	return `setsid bash --noprofile --norc -c 'echo $$ >` + file + `.tmp; mv ` + file + `.tmp ` + file +
		`; exec sleep 301' </dev/null >/dev/null 2>&1 & until [ -s ` + file + ` ]; do sleep 0.01; done; : >ready; ` + rest
}

// awaitFile waits (at most 10 s) for file to exist.
func awaitFile(t *testing.T, file string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(file); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear within 10 s", file)
		}
	}
}

// watchPID opens a pidfd for the pid written to file, once it is there, after checking the
// process left its session.
func watchPID(t *testing.T, file string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var b []byte
	for {
		var err error
		if b, err = os.ReadFile(file); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s", file)
		}
		time.Sleep(10 * time.Millisecond)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file %q: %v", b, err)
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("pidfd of %d: %v", pid, err)
	}
	t.Cleanup(func() { _ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); _ = unix.Close(fd) })
	if sid, _ := unix.Getsid(pid); sid != pid {
		t.Fatalf("process %d did not leave its session (sid %d)", pid, sid)
	}
	return fd
}

// exitedWithin reports whether the process behind the pidfd exits within d.
func exitedWithin(fd int, d time.Duration) bool {
	start := time.Now()
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		left := d - time.Since(start)
		n, err := unix.Poll(fds, max(int(left/time.Millisecond), 0))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return n == 1
	}
}

func waitStatus(t *testing.T, cmd *exec.Cmd) syscall.WaitStatus {
	t.Helper()
	_ = cmd.Wait()
	return cmd.ProcessState.Sys().(syscall.WaitStatus)
}

// TestTheSupervisorEndsAsTheCommandDid: its parent reads the command's own wait status, exit
// code or signal, from the supervisor.
func TestTheSupervisorEndsAsTheCommandDid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, script string
		code         int
		sig          syscall.Signal
	}{
		{"ExitZero", "exit 0", 0, 0},
		{"ExitCode", "exit 42", 42, 0},
		{"KilledBySIGKILL", "kill -KILL $$", 0, syscall.SIGKILL},
		{"KilledBySIGTERM", "kill -TERM $$", 0, syscall.SIGTERM},
		{"KilledBySIGSEGV", "kill -SEGV $$", 0, syscall.SIGSEGV},
		{"KilledBySIGABRT", "kill -ABRT $$", 0, syscall.SIGABRT},
		{"KilledBySIGUSR1", "kill -USR1 $$", 0, syscall.SIGUSR1},
		{"KilledByTheKillSignalItself", "kill -HUP $$", 0, syscall.SIGHUP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cmd := bash(t, tc.script)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			ws := waitStatus(t, cmd)
			switch {
			case tc.sig != 0 && (!ws.Signaled() || ws.Signal() != tc.sig):
				t.Errorf("wait status %#x, want death by %v", ws, tc.sig)
			case tc.sig == 0 && (!ws.Exited() || ws.ExitStatus() != tc.code):
				t.Errorf("wait status %#x, want exit %d", ws, tc.code)
			}
			if ws.CoreDump() {
				t.Error("the supervisor dumped core")
			}
			if stderr.Len() > 0 {
				t.Errorf("stderr %q, want nothing from the supervisor", stderr.String())
			}
		})
	}
}

// TestNothingOutlivesTheCommand: a process that left the command's session with setsid dies
// with the command, however the command ends.
func TestNothingOutlivesTheCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		rest   string
		signal syscall.Signal // sent to the supervisor once the escapee runs; 0 for none
		code   int
		sig    syscall.Signal
	}{
		{"CommandExits", "until [ -e go ]; do sleep 0.01; done; exit 3", 0, 3, 0},
		{"KillRequest", "sleep 300", reaper.KillSignal, 0, syscall.SIGKILL},
		// The trap is set before the escapee's pid is written, so before TERM is sent.
		{"TERMReachesTheCommandsGroup", "sleep 300 & wait", syscall.SIGTERM, 9, 0},
		{"INTReachesTheCommandsGroup", "sleep 300", syscall.SIGINT, 0, syscall.SIGINT},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pidFile := filepath.Join(t.TempDir(), "pid")
			script := escapee(t, pidFile, tc.rest)
			if tc.signal == syscall.SIGTERM {
				script = "trap 'exit 9' TERM; " + script
			}
			cmd := bash(t, script)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			fd := watchPID(t, pidFile)
			// Signal only once the script is past its wait loop: bash that gets SIGINT while a
			// child it waits for exits normally takes the child to have handled it, and goes on.
			awaitFile(t, filepath.Join(cmd.Dir, "ready"))
			if err := os.WriteFile(filepath.Join(cmd.Dir, "go"), nil, 0o600); err != nil { // CommandExits waits for it
				t.Fatal(err)
			}
			if tc.signal != 0 {
				if err := cmd.Process.Signal(tc.signal); err != nil {
					t.Fatal(err)
				}
			}
			ws := waitStatus(t, cmd)
			if !exitedWithin(fd, goneWithin) {
				t.Fatalf("the setsid'd process still runs %v after its command ended", goneWithin)
			}
			switch {
			case tc.sig != 0 && (!ws.Signaled() || ws.Signal() != tc.sig):
				t.Errorf("wait status %#x, want death by %v", ws, tc.sig)
			case tc.sig == 0 && (!ws.Exited() || ws.ExitStatus() != tc.code):
				t.Errorf("wait status %#x, want exit %d", ws, tc.code)
			}
		})
	}
}

// TestAKilledParent: the process that started the supervisor is SIGKILLed and can clean up
// nothing. A command's supervisor then kills the command's whole tree; a detached one (a job's)
// runs on, and still kills the tree when asked.
func TestAKilledParent(t *testing.T) {
	t.Parallel()
	for _, detached := range []bool{false, true} {
		name := "CommandTreeDiesWithIt"
		if detached {
			name = "DetachedSupervisorRunsOnAndStillContains"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			pidFile := filepath.Join(t.TempDir(), "pid")
			parent := exec.Command(os.Args[0], "-test.run=^$")
			parent.Dir = t.TempDir() // where the command, in its parent's directory, writes "ready"
			parent.Env = append(os.Environ(), parentEnv+"="+escapee(t, pidFile, "sleep 300"))
			if detached {
				parent.Env = append(parent.Env, parentEnv+"_DETACHED=1")
			}
			out, err := parent.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := parent.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = parent.Process.Kill(); _ = parent.Wait() })
			var line [32]byte
			n, _ := out.Read(line[:])
			supervisor, err := strconv.Atoi(strings.TrimSpace(string(line[:n])))
			if err != nil {
				t.Fatalf("the parent did not report its supervisor's pid: %q", line[:n])
			}
			if !reaper.Is(supervisor) || reaper.Is(parent.Process.Pid) {
				t.Errorf("Is(supervisor %d) = %v, Is(parent %d) = %v; want true, false",
					supervisor, reaper.Is(supervisor), parent.Process.Pid, reaper.Is(parent.Process.Pid))
			}
			sfd, err := unix.PidfdOpen(supervisor, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(sfd)
			fd := watchPID(t, pidFile)

			if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = parent.Wait()
			if !detached {
				if !exitedWithin(fd, goneWithin) {
					t.Fatalf("the setsid'd process still runs %v after the supervisor's parent was killed", goneWithin)
				}
				return
			}
			if exitedWithin(sfd, 200*time.Millisecond) || exitedWithin(fd, 0) {
				t.Fatal("a detached supervisor or its command ended with the parent")
			}
			if err := unix.PidfdSendSignal(sfd, reaper.KillSignal, nil, 0); err != nil {
				t.Fatal(err)
			}
			if !exitedWithin(fd, goneWithin) || !exitedWithin(sfd, goneWithin) {
				t.Fatalf("a kill request left the detached command's tree running after %v", goneWithin)
			}
		})
	}
}

// TestACommandThatCannotStart: Wrap fails as cmd.Start would have, since the supervisor
// starts the command too late to make cmd.Start fail; a command that disappears in between is
// reported on its stderr, with 127 as a shell does for a command not found.
func TestACommandThatCannotStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notExecutable := filepath.Join(dir, "not-executable")
	if err := os.WriteFile(notExecutable, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "missing"), notExecutable, dir} {
		if err := reaper.Wrap(exec.Command(path), true); err == nil {
			t.Errorf("Wrap(%s) = nil, want the error starting it would give", path)
		}
	}

	gone := filepath.Join(dir, "gone")
	if err := os.WriteFile(gone, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(gone)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := reaper.Wrap(cmd, true); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if ws := waitStatus(t, cmd); !ws.Exited() || ws.ExitStatus() != 127 || !strings.Contains(stderr.String(), gone) {
		t.Errorf("wait status %#x, stderr %q; want exit 127 naming the command", ws, stderr.String())
	}
}
