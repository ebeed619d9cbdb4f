package worker_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
)

func (s *session) startJob(req *workerv1.StartJob) {
	s.t.Helper()
	if req.Agent == "" {
		req.Agent = "tester"
	}
	if req.Ceiling == nil {
		req.Ceiling = durationpb.New(time.Hour)
	}
	s.send(&workerv1.ConnectResponse{Event: &workerv1.ConnectResponse_StartJob{StartJob: req}})
}

func (s *session) cancelJob(id int64) {
	s.t.Helper()
	s.send(&workerv1.ConnectResponse{Event: &workerv1.ConnectResponse_CancelJob{CancelJob: &workerv1.CancelJob{JobId: id}}})
}

func (s *session) attachJob(id, offset int64) {
	s.t.Helper()
	s.send(&workerv1.ConnectResponse{Event: &workerv1.ConnectResponse_AttachJob{AttachJob: &workerv1.AttachJob{JobId: id, LogOffset: offset}}})
}

func (s *session) ackJob(id int64) {
	s.t.Helper()
	s.send(&workerv1.ConnectResponse{Event: &workerv1.ConnectResponse_AckJob{AckJob: &workerv1.AckJob{JobId: id}}})
}

// jobRun is what the primary saw of a job on one connection.
type jobRun struct {
	started bool
	output  string // from the offset the reading began at
	next    int64  // the offset after the last byte received
	exit    *workerv1.JobExit
}

// readJob reads the messages about job id, checking that its output is contiguous from offset
// from, until done says to stop. Any message about something else fails the test.
func (s *session) readJob(id, from int64, done func(*jobRun) bool) *jobRun {
	s.t.Helper()
	r := &jobRun{next: from}
	var out strings.Builder
	for !done(r) {
		msg := s.recv()
		switch {
		case msg.GetJobStarted() != nil && msg.GetJobStarted().GetJobId() == id:
			if r.started || out.Len() > 0 {
				s.t.Fatalf("job %d: JobStarted again or after its output", id)
			}
			r.started = true
		case msg.GetJobOutput() != nil && msg.GetJobOutput().GetJobId() == id:
			o := msg.GetJobOutput()
			if o.GetOffset() != r.next {
				s.t.Fatalf("job %d: output at offset %d, want %d", id, o.GetOffset(), r.next)
			}
			if len(o.GetData()) == 0 || len(o.GetData()) > 32<<10 {
				s.t.Fatalf("job %d: chunk of %d bytes", id, len(o.GetData()))
			}
			out.Write(o.GetData())
			r.next += int64(len(o.GetData()))
			r.output = out.String()
		case msg.GetJobFinished() != nil && msg.GetJobFinished().GetJobId() == id:
			r.exit = msg.GetJobFinished().GetExit()
			if !done(r) {
				s.t.Fatalf("job %d finished early: %v (output %q)", id, r.exit, tail(r.output))
			}
		default:
			s.t.Fatalf("reading job %d, got %v", id, msg)
		}
	}
	return r
}

// collectJob reads job id's messages until its JobFinished.
func (s *session) collectJob(id, from int64) *jobRun {
	s.t.Helper()
	return s.readJob(id, from, func(r *jobRun) bool { return r.exit != nil })
}

// waitJob reads job id's messages until its output contains marker; the job must not finish
// first.
func (s *session) waitJob(id, from int64, marker string) *jobRun {
	s.t.Helper()
	return s.readJob(id, from, func(r *jobRun) bool { return strings.Contains(r.output, marker) })
}

func tail(s string) string { return s[max(len(s)-200, 0):] }

// jobFile is a file of job id in a worker's state dir.
func jobFile(stateDir string, id int64, ext string) string {
	return filepath.Join(stateDir, "jobs", strconv.FormatInt(id, 10)+ext)
}

// eventually polls cond until it holds or the test deadline passes.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(testDeadline)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("%s: not within %v", what, testDeadline)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// gate is a FIFO a job reads a line from: it blocks until the test opens the gate.
type gate struct {
	t    testing.TB
	path string
}

func newGate(t testing.TB) *gate {
	t.Helper()
	g := &gate{t: t, path: filepath.Join(t.TempDir(), "gate.fifo")}
	if err := syscall.Mkfifo(g.path, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	return g
}

// wait is the shell that blocks a job until the gate opens.
func (g *gate) wait() string { return `read -r _ <'` + g.path + `'` }

// open lets the job through: the line stays in the FIFO until the job reads it, since the test
// holds the FIFO open until cleanup.
func (g *gate) open() {
	g.t.Helper()
	f, err := os.OpenFile(g.path, os.O_RDWR, 0)
	if err != nil {
		g.t.Fatalf("open gate: %v", err)
	}
	g.t.Cleanup(func() { f.Close() })
	if _, err := f.WriteString("go\n"); err != nil {
		g.t.Fatalf("open gate: %v", err)
	}
}
