package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// A database written by a primary with jobs but without approvals (version 3) keeps its jobs
// when 0004 adds approvals and where a job runs.
func TestMigrateFromVersion3KeepsJobs(t *testing.T) {
	ctx := context.Background()
	path, db := databaseAtVersion(t, 3)
	created := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	_, err := db.ExecContext(ctx, `INSERT INTO jobs (kind, command, label, channel, thread, author, agent, workspace,
		ceiling_ns, log_path, status, pid, proc_start, created_at, ended_at, outcome, exit_code, tail) VALUES
		('command', 'make test', 'tests', 'room', 't1', '@alice', 'coder', '/work', ?, '/state/jobs/1.log', 'running', 42, 777, ?, NULL, '', NULL, ''),
		('agent', 'review', '', 'room', '', '@bob', 'coder', '/work', ?, '/state/jobs/2.log', 'finished', 43, 778, ?, ?, 'success', 0, 'ok')`,
		int64(time.Hour), nanos(created), int64(time.Hour), nanos(created), nanos(created.Add(time.Minute)))
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var version int
	if err := s.driver.read.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&version); err != nil || version != SchemaVersion() || version < 4 {
		t.Fatalf("version %d (%v), want %d", version, err, SchemaVersion())
	}
	running, err := s.Job(ctx, 1)
	if err != nil || running.Status != store.JobRunning || running.Command != "make test" || running.Pid != 42 ||
		running.ProcStart != 777 || !running.CreatedAt.Equal(created) || running.WorkerKey != "" || running.WorkerID != "" {
		t.Fatalf("running job after migration %+v, %v", running, err)
	}
	finished, err := s.Job(ctx, 2)
	if err != nil || finished.Status != store.JobFinished || finished.Outcome != "success" || finished.ExitCode == nil ||
		*finished.ExitCode != 0 || finished.Tail != "ok" || finished.Kind != "agent" {
		t.Fatalf("finished job after migration %+v, %v", finished, err)
	}
	if err := s.SetJobWorker(ctx, 1, "worker-1"); err != nil {
		t.Fatalf("SetJobWorker on a migrated job: %v", err)
	}

	// The old running job counts against the caps of an approved job.
	ap, _, err := s.SaveApproval(ctx, store.NewApproval{Kind: "command", Channel: "room", Thread: "t1", Author: "@alice",
		Command: "make lint", Workdir: "primary:/work", Ceiling: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.BeginApproval(ctx, ap.ID, "admin"); err != nil {
		t.Fatal(err)
	}
	j := store.NewJob{Kind: "command", Command: "make lint", Channel: "room", Thread: "t1", Author: "@alice",
		Workspace: "/work", Ceiling: time.Hour, LogDir: "/state/jobs"}
	if _, err := s.CreateApprovedJob(ctx, ap.ID, j, store.JobCaps{PerThread: 1}); err == nil {
		t.Fatal("the migrated running job was not counted")
	}
	if job, err := s.CreateApprovedJob(ctx, ap.ID, j, store.JobCaps{PerThread: 2}); err != nil || job.ID != 3 {
		t.Fatalf("approved job %+v, %v; want id 3", job, err)
	}
}
