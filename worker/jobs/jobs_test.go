package jobs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/sandbox"

	"go.uber.org/goleak"

	"github.com/turncli/turncli/internal/shellpriv"
	"google.golang.org/protobuf/types/known/durationpb"

	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/internal/jobproc"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction(shellpriv.SpawnerFunction))
}

func TestJobEnv(t *testing.T) {
	got := jobEnv("http://127.0.0.1:5",
		map[string]string{
			"MINDROOM_AGENT_CLI_TOKEN": "t", "MINDROOM_AGENT_CLI_WINDOW": "w",
			"MINDROOM_AGENT_CLI_URL": "http://evil", "PATH": "/evil",
		},
		map[string]string{
			"MINDROOM_AGENT_TASK": "brief", "MINDROOM_AGENT_CLI_TOKEN": "forged", "MINDROOM_AGENT_CLI_URL": "http://evil",
			"MINDROOM_AGENT_CLI_EXTRA": "x", "MINDROOM_AGENT_task": "x", "MINDROOM_AGENT_": "x", "MINDROOM_WORKER_CREDENTIAL": "secret",
			"LD_PRELOAD": "/evil.so", "MINDROOM_AGENT_A1": "digit", "TRACEPARENT": "forged",
		},
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "vendor=1")
	want := map[string]string{
		"MINDROOM_AGENT_CLI_URL": "http://127.0.0.1:5", "MINDROOM_AGENT_CLI_TOKEN": "t", "MINDROOM_AGENT_CLI_WINDOW": "w",
		"MINDROOM_AGENT_TASK": "brief",
		"TRACEPARENT":         "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "TRACESTATE": "vendor=1",
	}
	if len(got) != len(want) {
		t.Errorf("jobEnv = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

func TestJobEnvOfACommandJobHasNoAgentCLI(t *testing.T) {
	got := jobEnv("http://127.0.0.1:5", nil, map[string]string{"MINDROOM_AGENT_CLI_URL": "http://evil"}, "", "")
	if len(got) != 0 {
		t.Errorf("jobEnv without a grant = %v, want nothing", got)
	}
}

func TestJobEnvDropsAMalformedTraceContext(t *testing.T) {
	for _, traceparent := range []string{"00-zz-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\nPATH=/evil"} {
		if got := jobEnv("http://127.0.0.1:5", nil, nil, traceparent, "vendor=1"); len(got) != 0 {
			t.Errorf("jobEnv with traceparent %q = %v, want nothing", traceparent, got)
		}
	}
}

// noShells is a Shells for tests that launch nothing.
type noShells struct{}

func (noShells) Workspace(string) (string, error)                        { return os.TempDir(), nil }
func (noShells) Environment(map[string]string, string) []string          { return nil }
func (noShells) JobSandbox(string, string, string) (*sandbox.Job, error) { return nil, nil }
func (noShells) ShellUser() *shellpriv.User                              { return nil }

func TestOpenTakesOverTheRecordsItFinds(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	self, err := jobproc.StartTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	write("1.json", `{"id":1,"state":"finished","exit":{"code":2,"code_known":true,"timed_out":true}}`)
	write("1.log", "kept")
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	// Recorded as starting, its process named itself, wrote its status and is gone.
	write("2.json", `{"id":2,"state":"starting","started_at":"2026-01-02T03:04:05Z","deadline":"2026-01-02T04:04:05Z"}`)
	write("2.proc", strconv.Itoa(gone.Process.Pid)+" 1\n")
	write("2.status", "7\n")
	// Recorded as starting, no process ever named itself: given up.
	write("8.json", `{"id":8,"state":"starting","started_at":"2026-01-02T03:04:05Z","deadline":"2026-01-02T04:04:05Z"}`)
	write("9.proc", "1 1\n")
	// A recorded pid now used by another process (this one, with another start time).
	write("3.json", `{"id":3,"state":"running","pid":`+strconv.Itoa(os.Getpid())+`,"proc_start":`+strconv.FormatUint(self+1, 10)+`}`)
	write("4.json", `{not json`)
	write("5.log", "orphan")
	write("6.status", "0\n")
	write("7.123.tmp", "half")
	write("notes.txt", "not ours")

	m, err := Open(Config{Dir: dir, Shells: noShells{}, StartWait: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s, states := m.Connect(func(*workerv1.ConnectRequest) error { return nil })
	defer s.Close()

	want := []*workerv1.JobState{
		{JobId: 1, Exit: &workerv1.JobExit{Code: 2, CodeKnown: true, TimedOut: true}},
		{JobId: 2, Exit: &workerv1.JobExit{Code: 7, CodeKnown: true}}, // its status file tells
		{JobId: 3, Exit: &workerv1.JobExit{}},                         // a recycled pid is not the job
		{JobId: 4, Exit: &workerv1.JobExit{}},                         // unreadable, still reported
		{JobId: 8, Exit: &workerv1.JobExit{StartError: startGivenUp}}, // never started, never runs
	}
	if len(states) != len(want) {
		t.Fatalf("states = %v, want %v", states, want)
	}
	for i := range want {
		g, w := states[i], want[i]
		if g.GetJobId() != w.GetJobId() || g.GetRunning() || g.GetExit().GetCode() != w.GetExit().GetCode() ||
			g.GetExit().GetCodeKnown() != w.GetExit().GetCodeKnown() || g.GetExit().GetTimedOut() != w.GetExit().GetTimedOut() ||
			g.GetExit().GetStartError() != w.GetExit().GetStartError() {
			t.Errorf("state %d = %v, want %v", i, g, w)
		}
	}
	for name, kept := range map[string]bool{
		"1.log": true, "notes.txt": true, "2.status": true, "2.proc": true,
		"5.log": false, "6.status": false, "7.123.tmp": false, "9.proc": false,
	} {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != kept {
			t.Errorf("%s: kept %v, want %v", name, err == nil, kept)
		}
	}
	// The jobs found finished are recorded so, atomically and private.
	for _, id := range []int64{2, 3, 4, 8} {
		rec, err := m.readRecord(id)
		if err != nil || rec.State != stateFinished {
			t.Errorf("record %d = %+v, %v; want finished", id, rec, err)
		}
		if fi, err := os.Stat(m.recordPath(id)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("record %d: %v, %v; want mode 0600", id, fi, err)
		}
	}
	// An acknowledged job's files go.
	s.Open()
	s.Ack(1)
	if _, err := os.Stat(filepath.Join(dir, "1.log")); !os.IsNotExist(err) {
		t.Errorf("1.log after the ack: %v", err)
	}
	if _, err := os.Stat(m.recordPath(1)); !os.IsNotExist(err) {
		t.Errorf("1.json after the ack: %v", err)
	}
}

func TestStartWithoutBashFinishesWithAStartError(t *testing.T) {
	m, err := Open(Config{Dir: t.TempDir(), Shells: noShells{}, BashPath: "/nonexistent/bash", Poll: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sent := make(chan *workerv1.ConnectRequest, 8)
	s, _ := m.Connect(func(msg *workerv1.ConnectRequest) error { sent <- msg; return nil })
	defer s.Close()
	s.Open()
	s.Start(&workerv1.StartJob{JobId: 1, Agent: "a", Command: "true", Ceiling: durationOf(time.Hour)})
	select {
	case msg := <-sent:
		if f := msg.GetJobFinished(); f.GetJobId() != 1 || f.GetExit().GetStartError() == "" {
			t.Errorf("first message = %v, want JobFinished with a start error", msg)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no JobFinished")
	}
}

func durationOf(d time.Duration) *durationpb.Duration { return durationpb.New(d) }
