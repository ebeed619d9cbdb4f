package jobproc_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/turncli/turncli/internal/jobproc"
)

// escapee starts a process that leaves the job's session with setsid and records its pid in
// file; the job goes on with rest.
func escapee(file, rest string) string {
	return `setsid bash --noprofile --norc -c 'echo $$ >` + file + `.tmp; mv ` + file + `.tmp ` + file +
		`; exec sleep 301' </dev/null >/dev/null 2>&1 & ` + rest
}

// watchPID opens a pidfd for the pid recorded in file once it appears.
func watchPID(t *testing.T, file string) int {
	t.Helper()
	waitForFile(t, file, "\n")
	b, _ := os.ReadFile(file)
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
		t.Fatalf("process %d did not leave the job's session", pid)
	}
	return fd
}

func requireGone(t *testing.T, fd int, what string) {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(testDeadline/time.Millisecond))
		if err == unix.EINTR {
			continue
		}
		if n != 1 {
			t.Fatalf("%s: the process that left the job's session still runs (poll %v)", what, err)
		}
		return
	}
}

// TestNothingOutlivesAJob: a job's descendants that called setsid are still in the job's
// cgroup leaf, or without one under the job's supervisor, so they end with the job however it
// ends, and when a later process finds the job gone. Run the package with TURNCLI_NO_CGROUPS=1
// to test the supervisor.
func TestNothingOutlivesAJob(t *testing.T) {
	t.Run("JobExits", func(t *testing.T) {
		dir := t.TempDir()
		pidFile := filepath.Join(dir, "pid")
		j := launch(t, escapee(pidFile, `until [ -s `+pidFile+` ]; do sleep 0.01; done; exit 4`))
		fd := watchPID(t, pidFile)
		if e := j.supervise(t, jobproc.Watch{}); e.Code != 4 || !e.Known {
			t.Errorf("exit = %+v, want code 4", e)
		}
		requireGone(t, fd, "after the job exited")
	})
	t.Run("JobIsCancelled", func(t *testing.T) {
		dir := t.TempDir()
		pidFile := filepath.Join(dir, "pid")
		j := launch(t, escapee(pidFile, `sleep 300`))
		fd := watchPID(t, pidFile)
		cancel := make(chan struct{})
		close(cancel)
		if e := j.supervise(t, jobproc.Watch{Cancel: cancel, Grace: 100 * time.Millisecond}); !e.Cancelled {
			t.Errorf("exit = %+v, want cancelled", e)
		}
		requireGone(t, fd, "after cancel")
	})
	t.Run("SignalReachesProcessesOutsideTheGroup", func(t *testing.T) {
		dir := t.TempDir()
		pidFile := filepath.Join(dir, "pid")
		j := launch(t, escapee(pidFile, `sleep 300`))
		fd := watchPID(t, pidFile)
		if err := j.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		requireGone(t, fd, "after SIGTERM to the job")
		_ = j.supervise(t, jobproc.Watch{})
	})
	t.Run("JobFoundGoneLeavesNothingRunning", func(t *testing.T) {
		dir := t.TempDir()
		pidFile := filepath.Join(dir, "pid")
		j := launch(t, escapee(pidFile, `until [ -s `+pidFile+` ]; do sleep 0.01; done`))
		fd := watchPID(t, pidFile)
		waitForFile(t, j.status, "\n")
		for end := time.Now().Add(testDeadline); !j.Exited(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatal("the job's process did not exit")
			}
		}
		// As a later process would after a restart, while nothing supervised the job: its
		// recorded process is gone, what it left is not.
		if p := jobproc.Find(j.Pid, j.Start, j.status); p != nil {
			t.Fatalf("Find returned a job whose process ended")
		}
		requireGone(t, fd, "after Find saw the job gone")
	})
}
