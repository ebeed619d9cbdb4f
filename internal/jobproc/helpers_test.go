package jobproc_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/jobproc"
	"github.com/turncli/turncli/internal/shellpriv/shellprivtest"
)

// testDeadline bounds every wait, so a job that never ends fails its test instead of hanging it.
const testDeadline = 20 * time.Second

// job is a launched job and its files.
type job struct {
	*jobproc.Process
	dir, log, status, identity string
	reaped                     *bool // Supervise has reaped it
}

// launch starts command as a job in a fresh directory (the shell user's) with env, its
// identity file job.proc, and stops and reaps what is left of it at cleanup.
func launch(t *testing.T, command string, env ...string) job {
	t.Helper()
	dir := shellprivtest.Dir(t)
	return launchIn(t, dir, filepath.Join(dir, "job.proc"), command, env...)
}

// launchIn is launch in dir with the identity file (none when empty).
func launchIn(t *testing.T, dir, identity, command string, env ...string) job {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	j := job{dir: dir, log: filepath.Join(dir, "job.log"), status: filepath.Join(dir, "job.status"), identity: identity, reaped: new(bool)}
	j.Process, err = jobproc.Launch(jobproc.Spec{
		Bash: bash, Command: command, Dir: dir, Env: env, LogPath: j.log, StatusPath: j.status, IdentityPath: identity,
	})
	if err != nil {
		t.Fatalf("Launch: %v", err)
	}
	t.Cleanup(func() {
		if !*j.reaped {
			stop := make(chan struct{})
			close(stop)
			_, _ = j.Supervise(jobproc.Watch{Deadline: time.Now().Add(time.Hour), Poll: time.Millisecond, Cancel: stop})
		}
	})
	return j
}

// supervise watches the job (with a far ceiling unless w sets one) and returns how it ended.
func (j job) supervise(t *testing.T, w jobproc.Watch) jobproc.Exit {
	t.Helper()
	if w.Deadline.IsZero() {
		w.Deadline = time.Now().Add(time.Hour)
	}
	if w.Poll == 0 {
		w.Poll = 5 * time.Millisecond
	}
	type result struct {
		e  jobproc.Exit
		ok bool
	}
	ch := make(chan result, 1)
	go func() {
		e, ok := j.Supervise(w)
		ch <- result{e, ok}
	}()
	select {
	case r := <-ch:
		if !r.ok {
			t.Fatalf("Supervise ended without the process exiting")
		}
		*j.reaped = true
		return r.e
	case <-time.After(testDeadline):
		t.Fatalf("the job did not end within %v", testDeadline)
		panic("unreachable")
	}
}

// waitForFile polls until the file at path contains want, or fails the test at the deadline.
func waitForFile(t *testing.T, path, want string) {
	t.Helper()
	end := time.Now().Add(testDeadline)
	for time.Now().Before(end) {
		if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), want) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	b, _ := os.ReadFile(path)
	t.Fatalf("%s never contained %q; it holds %q", path, want, b)
}
