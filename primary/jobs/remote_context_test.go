package jobs_test

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/sandbox"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/memory"
	"github.com/turncli/turncli/primary/workerhub"
)

// noSandboxes runs no local job in a sandbox; these tests start none.
type noSandboxes struct{}

func (noSandboxes) JobSandbox(string, string, string) (*sandbox.Job, error) { return nil, nil }

type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// A worker's report can be delivered after its connection ended: the result it carries is
// saved all the same, not lost with the connection's context.
func TestAFinishReportedAsItsConnectionEndsIsSaved(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := memory.Open(memory.Options{})
	t.Cleanup(func() { s.Close() })
	// The real hub with no worker connected: the worker has gone, so attaching and
	// acknowledging fail as they do once its connection has ended.
	hub := workerhub.New(workerhub.Config{Credentials: workerhub.NewCredentials()})
	t.Cleanup(hub.Close)
	m, err := jobs.New(jobs.Config{Store: s, StateDir: dir, Workers: hub, Sandboxes: noSandboxes{},
		Logger: slog.New(slog.NewTextHandler(testLog{t}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	if err := os.MkdirAll(m.LogDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	rec, err := s.CreateJob(ctx, store.NewJob{Kind: "command", Command: "make", Channel: "room", Thread: "t1",
		WorkerKey: "key-a", Ceiling: time.Hour, LogDir: m.LogDir()}, store.JobCaps{})
	if err != nil {
		t.Fatal(err)
	}

	m.WorkerJobs(ctx, "key-a", "w1", []jobs.WorkerJobState{{ID: rec.ID, Running: true}})
	ended, end := context.WithCancel(ctx)
	end()
	m.JobFinished(ended, "w1", rec.ID, jobs.WorkerJobExit{Code: 4, CodeKnown: true})

	j, err := m.Get(ctx, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != store.JobFinished || j.Outcome != "failed (exit 4)" || j.ExitCode == nil || *j.ExitCode != 4 || j.WorkerID != "w1" {
		t.Errorf("job after its finish was reported = %s, %q, exit %v, worker %q; want finished, %q, exit 4, worker w1",
			j.Status, j.Outcome, j.ExitCode, j.WorkerID, "failed (exit 4)")
	}
}
