package sqlite

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
	status, worker_id, pid, proc_start, created_at, ended_at, outcome, exit_code, tail, cancel_requested`

// CreateJob implements store.Jobs.
func (s *Store) CreateJob(ctx context.Context, j store.NewJob, caps store.JobCaps) (store.Job, error) {
	if err := validJob(j); err != nil {
		return store.Job{}, err
	}
	var out store.Job
	err := s.inTx(ctx, func(tx *sql.Tx) (err error) {
		out, err = createJob(ctx, tx, j, caps, s.now())
		return err
	})
	return out, err
}

func validJob(j store.NewJob) error {
	switch {
	case j.Kind != "command" && j.Kind != "agent":
		return invalid("job kind must be command or agent, not %q", j.Kind)
	case j.Command == "":
		return invalid("a job needs a command")
	case j.Channel == "":
		return invalid("a job needs a channel")
	case j.LogDir == "":
		return invalid("a job needs a log directory")
	case j.Ceiling < 0:
		return invalid("a job's ceiling cannot be negative")
	}
	return nil
}

// createJob checks the caps against the running jobs and inserts j as running, inside tx; j
// has passed validJob. Every way a job is created goes through here, so the caps are counted
// in the same transaction as the insert they allow.
func createJob(ctx context.Context, tx *sql.Tx, j store.NewJob, caps store.JobCaps, now time.Time) (store.Job, error) {
	var total, thread int
	if err := tx.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(channel = ? AND thread = ?), 0)
		FROM jobs WHERE status = 'running'`, j.Channel, j.Thread).Scan(&total, &thread); err != nil {
		return store.Job{}, fmt.Errorf("store: count jobs: %w", err)
	}
	if caps.Total > 0 && total >= caps.Total {
		return store.Job{}, fmt.Errorf("%w (%d)", store.ErrJobCapReached, caps.Total)
	}
	if caps.PerThread > 0 && thread >= caps.PerThread {
		return store.Job{}, fmt.Errorf("%w (%d)", store.ErrThreadJobCapReached, caps.PerThread)
	}
	row := tx.QueryRowContext(ctx, `INSERT INTO jobs (kind, command, label, channel, thread, author, agent,
		workspace, worker_key, ceiling_ns, log_path, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?)
		RETURNING id`,
		j.Kind, j.Command, j.Label, j.Channel, j.Thread, j.Author, j.Agent, j.Workspace, j.WorkerKey, int64(j.Ceiling), j.LogDir, nanos(now))
	var id int64
	if err := row.Scan(&id); err != nil {
		return store.Job{}, fmt.Errorf("store: create job: %w", err)
	}
	out, err := scanJob(tx.QueryRowContext(ctx, `UPDATE jobs SET log_path = ? WHERE id = ? RETURNING `+jobColumns,
		filepath.Join(j.LogDir, fmt.Sprintf("%d.log", id)), id))
	if err != nil {
		return store.Job{}, fmt.Errorf("store: create job: %w", err)
	}
	return out, nil
}

// SetJobWorker implements store.Jobs.
func (s *Store) SetJobWorker(ctx context.Context, id int64, workerID string) error {
	if workerID == "" {
		return invalid("a job's worker needs an id")
	}
	res, err := s.write.ExecContext(ctx, `UPDATE jobs SET worker_id = ? WHERE id = ? AND status = 'running'`, workerID, id)
	if err != nil {
		return fmt.Errorf("store: set job worker: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: set job worker: %w", err)
	} else if n == 0 {
		return fmt.Errorf("%w: running job %d", store.ErrNotFound, id)
	}
	return nil
}

// SetJobProcess implements store.Jobs.
func (s *Store) SetJobProcess(ctx context.Context, id int64, pid int, procStart uint64) error {
	if pid <= 0 {
		return invalid("pid must be positive")
	}
	res, err := s.write.ExecContext(ctx, `UPDATE jobs SET pid = ?, proc_start = ? WHERE id = ? AND status = 'running'`,
		pid, int64(procStart), id)
	if err != nil {
		return fmt.Errorf("store: set job process: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: set job process: %w", err)
	} else if n == 0 {
		return fmt.Errorf("%w: running job %d", store.ErrNotFound, id)
	}
	return nil
}

// FinishJob implements store.Jobs.
func (s *Store) FinishJob(ctx context.Context, id int64, r store.JobResult, c store.NewContinuation) (finished, created bool, err error) {
	if r.Outcome == "" {
		return false, false, invalid("a finished job needs an outcome")
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var exit sql.NullInt64
		if r.ExitCode != nil {
			exit = sql.NullInt64{Int64: int64(*r.ExitCode), Valid: true}
		}
		res, err := tx.ExecContext(ctx, `UPDATE jobs SET status = 'finished', ended_at = ?, outcome = ?, exit_code = ?, tail = ?
			WHERE id = ? AND status = 'running'`, nanos(s.now()), r.Outcome, exit, r.Tail, id)
		if err != nil {
			return fmt.Errorf("store: finish job: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("store: finish job: %w", err)
		}
		if n == 0 {
			var one int
			if err := tx.QueryRowContext(ctx, `SELECT 1 FROM jobs WHERE id = ?`, id).Scan(&one); errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("%w: job %d", store.ErrNotFound, id)
			} else if err != nil {
				return fmt.Errorf("store: finish job: %w", err)
			}
		}
		finished = n == 1
		_, created, err = insertContinuation(ctx, tx, c, s.now())
		return err
	})
	if err != nil {
		return false, false, err
	}
	return finished, created, nil
}

// Job implements store.Jobs.
func (s *Store) Job(ctx context.Context, id int64) (store.Job, error) {
	j, err := scanJob(s.read.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id = ?`, id))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.Job{}, fmt.Errorf("%w: job %d", store.ErrNotFound, id)
	case err != nil:
		return store.Job{}, fmt.Errorf("store: job: %w", err)
	}
	return j, nil
}

// ListJobs implements store.Jobs.
func (s *Store) ListJobs(ctx context.Context, status store.JobStatus) ([]store.Job, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE ? = '' OR status = ? ORDER BY id DESC`,
		string(status), string(status))
	if err != nil {
		return nil, fmt.Errorf("store: list jobs: %w", err)
	}
	defer rows.Close()
	var out []store.Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list jobs: %w", err)
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list jobs: %w", err)
	}
	return out, nil
}

func scanJob(row interface{ Scan(...any) error }) (store.Job, error) {
	var j store.Job
	var ceiling, procStart, created int64
	var ended, exit sql.NullInt64
	var status string
	if err := row.Scan(&j.ID, &j.Kind, &j.Command, &j.Label, &j.Channel, &j.Thread, &j.Author, &j.Agent, &j.Workspace,
		&j.WorkerKey, &ceiling, &j.LogPath, &status, &j.WorkerID, &j.Pid, &procStart, &created, &ended, &j.Outcome, &exit,
		&j.Tail, &j.CancelRequested); err != nil {
		return store.Job{}, err
	}
	j.Ceiling = time.Duration(ceiling)
	j.LogDir = filepath.Dir(j.LogPath)
	j.Status = store.JobStatus(status)
	j.ProcStart = uint64(procStart)
	j.CreatedAt = fromNanos(created)
	if ended.Valid {
		j.EndedAt = fromNanos(ended.Int64)
	}
	if exit.Valid {
		code := int(exit.Int64)
		j.ExitCode = &code
	}
	return j, nil
}

// RequestJobCancel implements store.Jobs.
func (s *Store) RequestJobCancel(ctx context.Context, id int64) error {
	res, err := s.write.ExecContext(ctx, `UPDATE jobs SET cancel_requested = 1 WHERE id = ? AND status = 'running'`, id)
	if err != nil {
		return fmt.Errorf("store: request job cancel: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: request job cancel: %w", err)
	} else if n == 0 {
		return fmt.Errorf("%w: running job %d", store.ErrNotFound, id)
	}
	return nil
}
