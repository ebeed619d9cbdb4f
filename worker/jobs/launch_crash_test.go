package jobs

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/internal/jobproc"
)

// recordStarting writes the record start saves before it launches: a worker killed right
// then, or before it recorded the process, leaves exactly this.
func recordStarting(t *testing.T, dir string, id int64) {
	t.Helper()
	now := time.Now()
	b, err := json.Marshal(record{ID: id, State: stateStarting, StartedAt: now, Deadline: now.Add(time.Hour), Grace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, strconv.FormatInt(id, 10)+".json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// launchAsKilledWorker starts job id's process as start does, from a worker killed before it
// recorded the pid. The test reaps it.
func launchAsKilledWorker(t *testing.T, dir string, id int64, command string) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	base := filepath.Join(dir, strconv.FormatInt(id, 10))
	p, err := jobproc.Launch(jobproc.Spec{
		Bash: bash, Command: command, Dir: t.TempDir(), Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent"},
		LogPath: base + ".log", StatusPath: base + ".status", IdentityPath: base + ".proc",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Reap() })
}

// finishedOn waits for the JobFinished of id among the messages sent.
func finishedOn(t *testing.T, sent <-chan *workerv1.ConnectRequest, id int64) *workerv1.JobExit {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case msg := <-sent:
			if f := msg.GetJobFinished(); f.GetJobId() == id {
				return f.GetExit()
			}
		case <-deadline:
			t.Fatalf("no JobFinished for job %d", id)
		}
	}
}

// TestOpenTakesOverJobsWhoseProcessWasNotRecorded: the worker died between recording a job as
// starting and recording its process. The next one names the process by its identity file,
// supervises it (cancel reaches it) and reports its real exit; a launch that never produced a
// process is given up, and its command never runs.
func TestOpenTakesOverJobsWhoseProcessWasNotRecorded(t *testing.T) {
	dir := t.TempDir()
	recordStarting(t, dir, 1) // runs on: cancelled below
	launchAsKilledWorker(t, dir, 1, "echo ready; exec sleep 1000")
	recordStarting(t, dir, 2) // ended while the worker was down
	launchAsKilledWorker(t, dir, 2, "echo its-output; exit 3")
	recordStarting(t, dir, 3) // never launched
	// Open waits only briefly here: both processes are to have named themselves before it.
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, ended := jobproc.ReadStatus(filepath.Join(dir, "2.status"))
		if _, st := jobproc.ReadIdentity(filepath.Join(dir, "1.proc")); ended && st == jobproc.IdentityWritten {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the launched jobs did not name themselves, or job 2 did not end")
		}
		time.Sleep(5 * time.Millisecond)
	}

	m, err := Open(Config{Dir: dir, Shells: noShells{}, Poll: time.Millisecond, StartWait: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sent := make(chan *workerv1.ConnectRequest, 64)
	s, states := m.Connect(func(msg *workerv1.ConnectRequest) error { sent <- msg; return nil })
	defer s.Close()
	if len(states) != 3 || !states[0].GetRunning() || states[1].GetRunning() || states[2].GetRunning() {
		t.Fatalf("states = %v; want job 1 running, 2 and 3 finished", states)
	}
	if e := states[1].GetExit(); e.GetCode() != 3 || !e.GetCodeKnown() || e.GetStartError() != "" {
		t.Errorf("job 2 = %v; want its real code 3", e)
	}
	if e := states[2].GetExit(); e.GetStartError() != startGivenUp || e.GetCodeKnown() {
		t.Errorf("job 3 = %v; want given up", e)
	}
	if rec, err := m.readRecord(1); err != nil || rec.State != stateRunning || rec.Pid == 0 || rec.ProcStart == 0 {
		t.Errorf("job 1's record = %+v, %v; want it running with its process", rec, err)
	}
	if b, _ := os.ReadFile(m.logPath(2)); string(b) != "its-output\n" {
		t.Errorf("job 2's log = %q, want its output kept", b)
	}

	s.Open()
	s.Cancel(1)
	if e := finishedOn(t, sent, 1); !e.GetCancelled() || e.GetCode() != 143 {
		t.Errorf("job 1 = %v; want cancelled by SIGTERM", e)
	}
	// Job 3's process, were it only now getting to run, finds its launch given up.
	launchAsKilledWorker(t, dir, 3, "echo ran > "+filepath.Join(dir, "3.ran"))
	time.Sleep(100 * time.Millisecond)
	if _, err := os.Stat(filepath.Join(dir, "3.ran")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the given-up job's command ran (%v)", err)
	}
	s.Ack(3)
	if _, err := os.Stat(m.identityPath(3)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the acknowledged job's identity file: %v, want it removed", err)
	}
}
