package jobproc_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/jobproc"
	"github.com/turncli/turncli/internal/shellpriv/shellprivtest"
)

func TestLaunchedJobs(t *testing.T) {
	cases := []struct {
		name    string
		command string
		env     []string
		want    jobproc.Exit
		log     string // the log must contain this
	}{
		{name: "ExitCodeIsRecorded", command: "exit 3", want: jobproc.Exit{Code: 3, Known: true}},
		{name: "SuccessIsZero", command: "true", want: jobproc.Exit{Code: 0, Known: true}},
		{name: "StoppedBySignalIs128PlusN", command: "kill -USR1 $$", want: jobproc.Exit{Code: 128 + int(syscall.SIGUSR1), Known: true}},
		{name: "KilledIs137", command: "kill -KILL $$", want: jobproc.Exit{Code: 137, Known: true}},
		{name: "CommandNotFoundIs127", command: "no-such-command-here", want: jobproc.Exit{Code: 127, Known: true}},
		{
			name: "StdoutAndStderrGoToTheLog", command: "echo out; echo err >&2",
			want: jobproc.Exit{Known: true}, log: "out\nerr\n",
		},
		{
			name: "RunsAsALoginShellInItsDirectory", command: `shopt -q login_shell && echo "login in $PWD"`,
			want: jobproc.Exit{Known: true}, log: "login in ",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := launch(t, c.command, c.env...)
			got := j.supervise(t, jobproc.Watch{})
			if got != c.want {
				t.Errorf("exit = %+v, want %+v", got, c.want)
			}
			if code, ok := jobproc.ReadStatus(j.status); code != c.want.Code || !ok {
				t.Errorf("status file = %d, %v; want %d", code, ok, c.want.Code)
			}
			b, _ := os.ReadFile(j.log)
			if !strings.Contains(string(b), c.log) {
				t.Errorf("log = %q, want it to contain %q", b, c.log)
			}
		})
	}
}

func TestLaunchUsesOnlyTheGivenEnvironment(t *testing.T) {
	t.Setenv("JOBPROC_TEST_SECRET", "must-not-leak")
	j := launch(t, "env", "JOB_VAR=given", "HOME=/nonexistent")
	if e := j.supervise(t, jobproc.Watch{}); e.Code != 0 || !e.Known {
		t.Fatalf("exit = %+v", e)
	}
	b, _ := os.ReadFile(j.log)
	if !strings.Contains(string(b), "JOB_VAR=given\n") {
		t.Errorf("the job did not see its variable:\n%s", b)
	}
	if strings.Contains(string(b), "must-not-leak") {
		t.Errorf("the launching process's environment reached the job:\n%s", b)
	}
}

func TestLaunchStartsItsOwnSessionAndProcessGroup(t *testing.T) {
	j := launch(t, "echo ready; exec sleep 1000")
	waitForFile(t, j.log, "ready")
	if sid, err := getsid(j.Pid); err != nil || sid != j.Pid {
		t.Errorf("session = %d, %v; want the job's own (%d)", sid, err, j.Pid)
	}
	if pgid, err := syscall.Getpgid(j.Pid); err != nil || pgid != j.Pid {
		t.Errorf("process group = %d, %v; want the job's own (%d)", pgid, err, j.Pid)
	}
	if got, err := jobproc.StartTime(j.Pid); err != nil || got != j.Start {
		t.Errorf("start time = %d, %v; want the recorded %d", got, err, j.Start)
	}
}

func getsid(pid int) (int, error) {
	sid, _, errno := syscall.RawSyscall(syscall.SYS_GETSID, uintptr(pid), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(sid), nil
}

func TestLaunchRefusesAMissingDirectory(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	_, err = jobproc.Launch(jobproc.Spec{
		Bash: bash, Command: "true", Dir: filepath.Join(dir, "missing"),
		LogPath: filepath.Join(dir, "log"), StatusPath: filepath.Join(dir, "status"),
	})
	if err == nil {
		t.Fatal("Launch in a missing directory succeeded")
	}
}

func TestSupervise(t *testing.T) {
	// Each job is running its command (it wrote "ready") before its ceiling or cancel: a TERM in
	// the job's first instant may miss the command (see wrapper).
	t.Run("CeilingStopsTheGroupWithTerm", func(t *testing.T) {
		j := launch(t, "sleep 1000 & echo ready; wait")
		waitForFile(t, j.log, "ready")
		got := j.supervise(t, jobproc.Watch{Deadline: time.Now().Add(50 * time.Millisecond), Grace: testDeadline})
		if want := (jobproc.Exit{Code: 143, Known: true, TimedOut: true}); got != want {
			t.Errorf("exit = %+v, want %+v", got, want)
		}
	})
	t.Run("CeilingKillsAJobThatIgnoresTermAfterTheGrace", func(t *testing.T) {
		j := launch(t, "trap '' TERM; echo ready; sleep 1000; true")
		waitForFile(t, j.log, "ready")
		got := j.supervise(t, jobproc.Watch{Deadline: time.Now(), Grace: 50 * time.Millisecond})
		if want := (jobproc.Exit{Code: 137, Known: true, TimedOut: true}); got != want {
			t.Errorf("exit = %+v, want %+v", got, want)
		}
	})
	t.Run("CeilingAlreadyPassedStopsAtOnce", func(t *testing.T) {
		j := launch(t, "echo ready; exec sleep 1000")
		waitForFile(t, j.log, "ready")
		got := j.supervise(t, jobproc.Watch{Deadline: time.Now().Add(-time.Hour), Grace: testDeadline})
		if !got.TimedOut || got.Cancelled || got.Code != 143 {
			t.Errorf("exit = %+v, want timed out with 143", got)
		}
	})
	t.Run("CancelStopsTheJobAndCountsAsCancelled", func(t *testing.T) {
		j := launch(t, "echo ready; sleep 1000")
		waitForFile(t, j.log, "ready")
		cancel := make(chan struct{})
		close(cancel)
		got := j.supervise(t, jobproc.Watch{Cancel: cancel, Grace: testDeadline})
		if want := (jobproc.Exit{Code: 143, Known: true, Cancelled: true}); got != want {
			t.Errorf("exit = %+v, want %+v", got, want)
		}
	})
	t.Run("CeilingStopsBackgroundProcessesOfTheGroup", func(t *testing.T) {
		j := launch(t, `sleep 1000 & echo "child $!"; wait`)
		waitForFile(t, j.log, "child ")
		b, _ := os.ReadFile(j.log)
		var child int
		// A login shell's profile may write to the log too: the child's pid is on its own line.
		_, line, _ := strings.Cut(string(b), "child ")
		if _, err := fmt.Sscanf(line, "%d", &child); err != nil {
			t.Fatalf("log %q: %v", b, err)
		}
		start, err := jobproc.StartTime(child)
		if err != nil {
			t.Fatalf("child start time: %v", err)
		}
		j.supervise(t, jobproc.Watch{Deadline: time.Now(), Grace: testDeadline})
		end := time.Now().Add(testDeadline)
		for jobproc.Alive(child, start) && time.Now().Before(end) {
			time.Sleep(5 * time.Millisecond)
		}
		if jobproc.Alive(child, start) {
			t.Errorf("the job's background child %d outlived it", child)
		}
	})
	t.Run("StopEndsTheWatchAndTheJobRunsOn", func(t *testing.T) {
		j := launch(t, "echo ready; exec sleep 1000")
		waitForFile(t, j.log, "ready")
		stop := make(chan struct{})
		close(stop)
		if _, ok := j.Supervise(jobproc.Watch{Deadline: time.Now().Add(time.Hour), Stop: stop, Poll: time.Millisecond}); ok {
			t.Fatal("Supervise reported an exit of a running job")
		}
		if !jobproc.Alive(j.Pid, j.Start) {
			t.Fatal("the job did not run on after the watch stopped")
		}
	})
}

func TestFind(t *testing.T) {
	j := launch(t, "echo ready; exec sleep 1000")
	waitForFile(t, j.log, "ready")
	t.Run("RefusesADifferentStartTime", func(t *testing.T) {
		if p := jobproc.Find(j.Pid, j.Start+1, j.status); p != nil {
			t.Errorf("Find with another start time = %+v, want nil (a recycled pid)", p)
		}
	})
	t.Run("RefusesNoPid", func(t *testing.T) {
		if p := jobproc.Find(0, j.Start, j.status); p != nil {
			t.Errorf("Find(0) = %+v, want nil", p)
		}
	})
	t.Run("FindsTheRunningProcessAndCanStopIt", func(t *testing.T) {
		p := jobproc.Find(j.Pid, j.Start, j.status)
		if p == nil {
			t.Fatal("Find did not find the running job")
		}
		cancel := make(chan struct{})
		close(cancel)
		// A found process is not reaped by its finder: its status comes from the status file.
		e, ok := p.Supervise(jobproc.Watch{Deadline: time.Now().Add(time.Hour), Grace: testDeadline, Poll: time.Millisecond, Cancel: cancel})
		if want := (jobproc.Exit{Code: 143, Known: true, Cancelled: true}); !ok || e != want {
			t.Errorf("exit = %+v, %v; want %+v", e, ok, want)
		}
	})
	t.Run("AGoneProcessIsNotFound", func(t *testing.T) {
		j.supervise(t, jobproc.Watch{}) // reaps the exited launcher's child
		if p := jobproc.Find(j.Pid, j.Start, j.status); p != nil {
			t.Errorf("Find after the job ended = %+v, want nil", p)
		}
	})
}

func TestReadStatus(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name    string
		content *string
		code    int
		ok      bool
	}{
		{name: "MissingIsUnknown"},
		{name: "EmptyIsUnknown", content: ptr("")},
		{name: "WithoutItsNewlineIsIncomplete", content: ptr("12")},
		{name: "GarbageIsUnknown", content: ptr("x\n")},
		{name: "CompleteIsKnown", content: ptr("143\n"), code: 143, ok: true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "s"+string(rune('a'+i)))
			if c.content != nil {
				if err := os.WriteFile(path, []byte(*c.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if code, ok := jobproc.ReadStatus(path); code != c.code || ok != c.ok {
				t.Errorf("ReadStatus = %d, %v; want %d, %v", code, ok, c.code, c.ok)
			}
		})
	}
}

func ptr(s string) *string { return &s }

func TestLaunchKeepsTheGivenPathAfterTheLoginProfile(t *testing.T) {
	home := shellprivtest.Dir(t)
	// A login profile that sets PATH anew, as Debian's /etc/profile does.
	if err := os.WriteFile(filepath.Join(home, ".bash_profile"), []byte("PATH=/usr/bin:/bin\nexport FROM_PROFILE=yes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	given := "/opt/launcher:" + os.Getenv("PATH")
	j := launch(t, `printf '%s|%s\n' "$PATH" "$FROM_PROFILE"`, "PATH="+given, "HOME="+home)
	if e := j.supervise(t, jobproc.Watch{}); e.Code != 0 || !e.Known {
		t.Fatalf("exit = %+v", e)
	}
	b, _ := os.ReadFile(j.log)
	if got := strings.TrimSpace(string(b)); got != given+"|yes" {
		t.Errorf("the job saw %q, want the given PATH after its login profile ran (%q)", got, given+"|yes")
	}
}

func TestSuperviseStopsAJobWhoseLogPassesTheBound(t *testing.T) {
	j := launch(t, `while :; do printf '%01024d\n' 0; done`, "PATH="+os.Getenv("PATH"))
	e := j.supervise(t, jobproc.Watch{LogPath: j.log, MaxLogBytes: 64 << 10, Grace: 200 * time.Millisecond})
	if !e.OutputLimit || e.TimedOut || e.Cancelled {
		t.Fatalf("exit = %+v, want stopped over the output limit", e)
	}
	if e.Code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit code %d, want stopped by SIGTERM", e.Code)
	}
}
