package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/turncli/turncli/primary/store"
)

const jobColumns = `id, kind, command, label, channel, thread, author, agent, workspace, worker_key, ceiling_ns, log_path,
	status, worker_id, pid, proc_start, created_at, ended_at, outcome, exit_code, tail, cancel_requested, engine, engine_run, parking`

// InsertJob implements store.Tx.
func (t *Tx) InsertJob(ctx context.Context, j store.Job) (int64, error) {
	run, parking, err := jobJSON(j)
	if err != nil {
		return 0, err
	}
	var id int64
	if err := t.queryRow(ctx, `INSERT INTO jobs (kind, command, label, channel, thread, author, agent,
		workspace, worker_key, ceiling_ns, log_path, status, worker_id, pid, proc_start, created_at, ended_at, outcome,
		exit_code, tail, cancel_requested, engine, engine_run, parking)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		j.Kind, j.Command, j.Label, j.Channel, j.Thread, j.Author, j.Agent, j.Workspace, j.WorkerKey, int64(j.Ceiling),
		j.LogPath, string(j.Status), j.WorkerID, j.Pid, int64(j.ProcStart), nanos(j.CreatedAt), nullNanos(j.EndedAt),
		j.Outcome, exitCode(j.ExitCode), j.Tail, j.CancelRequested, j.Engine, run, parking).Scan(&id); err != nil {
		return 0, fmt.Errorf("store: create job: %w", err)
	}
	return id, nil
}

// UpdateJob implements store.Tx.
func (t *Tx) UpdateJob(ctx context.Context, from store.JobStatus, j store.Job) (bool, error) {
	run, parking, err := jobJSON(j)
	if err != nil {
		return false, err
	}
	n, err := t.exec(ctx, "update job", `UPDATE jobs SET log_path = ?, status = ?, worker_id = ?, cancel_requested = ?,
		pid = ?, proc_start = ?, ended_at = ?, outcome = ?, exit_code = ?, tail = ?, engine_run = ?, parking = ?
		WHERE id = ? AND status = ?`,
		j.LogPath, string(j.Status), j.WorkerID, j.CancelRequested, j.Pid, int64(j.ProcStart), nullNanos(j.EndedAt),
		j.Outcome, exitCode(j.ExitCode), j.Tail, run, parking, j.ID, string(from))
	return n == 1, err
}

// jobJSON is the stored text of j's engine run and parking record.
func jobJSON(j store.Job) (run, parking string, err error) {
	if run, err = store.EncodeEngineRun(j.Run); err != nil {
		return "", "", err
	}
	parking, err = store.EncodeParking(j.Parking)
	return run, parking, err
}

// QueueEndJob implements store.Tx.
func (t *Tx) QueueEndJob(ctx context.Context, id int64, from, to store.JobStatus, at time.Time, r store.JobResult) func() (bool, error) {
	ended := false
	run, err := store.EncodeEngineRun(r.Run)
	if err != nil {
		return func() (bool, error) { return false, err }
	}
	// The end clears the parking: a parked job ends when it is cancelled.
	wait := t.c.Queue(ctx, func(rows Rows) error {
		ids, err := collect(rows, scanID)
		ended = len(ids) == 1
		return err
	}, t.d.Bind(`UPDATE jobs SET status = ?, ended_at = ?, outcome = ?, exit_code = ?, tail = ?, engine_run = ?, parking = ''
		WHERE id = ? AND status = ? RETURNING id`), string(to), nanos(at), r.Outcome, exitCode(r.ExitCode), r.Tail, run, id, string(from))
	t.expect(ctx, `EXISTS (SELECT 1 FROM jobs WHERE id = ?)`, id)
	return func() (bool, error) {
		if err := wait(); err != nil {
			return false, fmt.Errorf("store: end job %d: %w", id, err)
		}
		return ended, nil
	}
}

func exitCode(code *int) *int64 {
	if code == nil {
		return nil
	}
	n := int64(*code)
	return &n
}

// Job implements store.Reader.
func (r Reader) Job(ctx context.Context, id int64) (store.Job, error) {
	j, err := scanJob(r.queryRow(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id = ?`, id))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.Job{}, fmt.Errorf("%w: job %d", store.ErrNotFound, id)
	case err != nil:
		return store.Job{}, fmt.Errorf("store: job: %w", err)
	}
	return j, nil
}

// ListJobs implements store.Reader.
func (r Reader) ListJobs(ctx context.Context, status store.JobStatus) ([]store.Job, error) {
	var c conditions
	c.Equal("status", string(status))
	return r.queryJobs(ctx, c, 0)
}

// PageJobs implements store.Reader.
func (r Reader) PageJobs(ctx context.Context, f store.JobFilter) ([]store.Job, error) {
	var c conditions
	c.Equal("status", string(f.Status))
	c.Conversation(f.Channel, f.Thread)
	c.BeforeID(f.BeforeID)
	return r.queryJobs(ctx, c, f.Limit)
}

// queryJobs returns up to limit jobs matching c, newest first.
func (r Reader) queryJobs(ctx context.Context, c conditions, limit int) ([]store.Job, error) {
	rows, err := r.query(ctx, `SELECT `+jobColumns+` FROM jobs WHERE `+c.SQL()+` ORDER BY id DESC LIMIT ?`,
		append(c.Args, r.limit(limit))...)
	if err != nil {
		return nil, fmt.Errorf("store: list jobs: %w", err)
	}
	out, err := collect(rows, scanJob)
	if err != nil {
		return nil, fmt.Errorf("store: list jobs: %w", err)
	}
	return out, nil
}

func scanJob(row Row) (store.Job, error) {
	var j store.Job
	var ceiling, procStart, created, pid int64
	var ended, exit *int64
	var status, run, parking string
	if err := row.Scan(&j.ID, &j.Kind, &j.Command, &j.Label, &j.Channel, &j.Thread, &j.Author, &j.Agent, &j.Workspace,
		&j.WorkerKey, &ceiling, &j.LogPath, &status, &j.WorkerID, &pid, &procStart, &created, &ended, &j.Outcome, &exit,
		&j.Tail, &j.CancelRequested, &j.Engine, &run, &parking); err != nil {
		return store.Job{}, err
	}
	j.Run, j.Parking = store.DecodeEngineRun(run), store.DecodeParking(parking)
	j.Ceiling = time.Duration(ceiling)
	j.LogDir = filepath.Dir(j.LogPath)
	j.Status = store.JobStatus(status)
	j.Pid = int(pid)
	j.ProcStart = uint64(procStart)
	j.CreatedAt = fromNanos(created)
	j.EndedAt = fromNullNanos(ended)
	if exit != nil {
		code := int(*exit)
		j.ExitCode = &code
	}
	return j, nil
}
