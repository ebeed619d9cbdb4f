package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"
)

func checkJob(j NewJob) error {
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
	case len(j.Engine) > MaxEngineName:
		return invalid("an engine name is at most %d bytes", MaxEngineName)
	case j.Engine != "" && j.Kind != "agent":
		return invalid("only an agent job has an engine")
	}
	return nil
}

// CreateJob implements Jobs.
func (p *Portable) CreateJob(ctx context.Context, j NewJob, caps JobCaps) (Job, error) {
	if err := checkJob(j); err != nil {
		return Job{}, err
	}
	at := p.clock()
	var out Job
	err := p.update(ctx, func(tx Tx) (err error) {
		out, err = createJob(ctx, tx, j, caps, at)
		return err
	})
	return out, err
}

// createJob checks the caps against the running jobs and inserts j as running, inside tx; j
// has passed checkJob. Every way a job is created goes through here, so the caps are counted
// in the same transaction as the insert they allow.
func createJob(ctx context.Context, tx Tx, j NewJob, caps JobCaps, at time.Time) (Job, error) {
	running, err := tx.ListJobs(ctx, JobRunning)
	if err != nil {
		return Job{}, err
	}
	thread := 0
	for _, r := range running {
		if r.Channel == j.Channel && r.Thread == j.Thread {
			thread++
		}
	}
	if caps.Total > 0 && len(running) >= caps.Total {
		return Job{}, fmt.Errorf("%w (%d)", ErrJobCapReached, caps.Total)
	}
	if caps.PerThread > 0 && thread >= caps.PerThread {
		return Job{}, fmt.Errorf("%w (%d)", ErrThreadJobCapReached, caps.PerThread)
	}
	// The log's name needs the id: the job is inserted naming its log directory, then given
	// its log file.
	job := Job{NewJob: j, Status: JobRunning, CreatedAt: at, LogPath: j.LogDir}
	if job.ID, err = tx.InsertJob(ctx, job); err != nil {
		return Job{}, err
	}
	tellThread(ctx, tx, ThreadJob, job.ID, ThreadOpened, at)
	job.LogPath = filepath.Join(j.LogDir, strconv.FormatInt(job.ID, 10)+".log")
	if err := changeJob(ctx, tx, job); err != nil {
		return Job{}, err
	}
	return tx.Job(ctx, job.ID)
}

// changeRunningJob applies change to running job id in one transaction; ErrNotFound when no
// running job has id.
func (p *Portable) changeRunningJob(ctx context.Context, id int64, change func(*Job)) error {
	return p.update(ctx, func(tx Tx) error {
		j, err := runningJob(ctx, tx, id)
		if err != nil {
			return err
		}
		change(&j)
		return changeJob(ctx, tx, j)
	})
}

// changeJob writes j over the running job it read.
func changeJob(ctx context.Context, tx Tx, j Job) error {
	ok, err := tx.UpdateJob(ctx, JobRunning, j)
	if err == nil && !ok {
		err = fmt.Errorf("%w: running job %d", ErrNotFound, j.ID)
	}
	return err
}

// SetJobWorker implements Jobs.
func (p *Portable) SetJobWorker(ctx context.Context, id int64, workerID string) error {
	if workerID == "" {
		return invalid("a job's worker needs an id")
	}
	return p.changeRunningJob(ctx, id, func(j *Job) { j.WorkerID = workerID })
}

// RequestJobCancel implements Jobs.
func (p *Portable) RequestJobCancel(ctx context.Context, id int64) error {
	return p.changeRunningJob(ctx, id, func(j *Job) { j.CancelRequested = true })
}

// SetJobProcess implements Jobs.
func (p *Portable) SetJobProcess(ctx context.Context, id int64, pid int, procStart uint64) error {
	if pid <= 0 {
		return invalid("pid must be positive")
	}
	return p.changeRunningJob(ctx, id, func(j *Job) { j.Pid, j.ProcStart = pid, procStart })
}

// FinishJob implements Jobs: running → finished once; the continuation goes in the same
// transaction whether or not this call finished the job, and its key keeps it single.
func (p *Portable) FinishJob(ctx context.Context, id int64, r JobResult, c NewContinuation) (finished, created bool, err error) {
	return p.finishJob(ctx, id, r, c, nil)
}

// FinishParkedJob implements Jobs: parked → finished in one transaction.
func (p *Portable) FinishParkedJob(ctx context.Context, id int64, r JobResult, c NewContinuation) (finished, created bool, err error) {
	return p.finishJob(ctx, id, r, c, func(tx Tx) error {
		j, err := runningJob(ctx, tx, id)
		if err == nil && !j.Parked() {
			err = fmt.Errorf("%w: job %d is not parked", ErrConflict, id)
		}
		return err
	})
}

// finishJob ends running job id with r and enqueues c in one transaction, after check (when
// set) allowed it in that transaction.
func (p *Portable) finishJob(ctx context.Context, id int64, r JobResult, c NewContinuation, check func(Tx) error) (finished, created bool, err error) {
	if r.Outcome == "" {
		return false, false, invalid("a finished job needs an outcome")
	}
	if err := checkContinuation(c); err != nil {
		return false, false, err
	}
	at := p.clock()
	var (
		queued func() (int64, bool, error)
		ended  func() (bool, error)
	)
	err = p.update(ctx, func(tx Tx) error {
		if check != nil {
			if err := check(tx); err != nil {
				return err
			}
		}
		// The continuation is written whether or not the end is; the end is a compare-and-set
		// on the running state; a missing job fails the transaction, which then keeps
		// neither. Without a check nothing is read before the commit.
		queued = tx.QueueContinuation(ctx, withoutEmptyCheckpoint(c), at)
		ended = tx.QueueEndJob(ctx, id, JobRunning, JobFinished, at, r)
		// Told whether or not this call ended the job: one that had ended was told then, and
		// a reader takes the item as it stands.
		tellThread(ctx, tx, ThreadJob, id, ThreadClosed, at)
		return nil
	})
	switch {
	case errors.Is(err, ErrUnmatched):
		return false, false, fmt.Errorf("%w: job %d", ErrNotFound, id)
	case err != nil:
		return false, false, err
	}
	if finished, err = ended(); err != nil {
		return false, false, err
	}
	if _, created, err = queued(); err != nil {
		return false, false, err
	}
	return finished, created, nil
}

// ParkJob implements Jobs.
func (p *Portable) ParkJob(ctx context.Context, id int64, parking Parking, run EngineRun) error {
	if parking.PromptID <= 0 || parking.Session == "" {
		return invalid("a parked job needs the prompt it waits on and the session to resume")
	}
	at := p.clock()
	return p.update(ctx, func(tx Tx) error {
		j, err := runningJob(ctx, tx, id)
		if err != nil {
			return err
		}
		if j.Parked() {
			return fmt.Errorf("%w: job %d is parked already", ErrConflict, id)
		}
		pr, err := tx.Prompt(ctx, parking.PromptID)
		if err != nil {
			return err
		}
		if pr.ParkedJob != 0 {
			return fmt.Errorf("%w: prompt %d holds job %d already", ErrConflict, pr.ID, pr.ParkedJob)
		}
		// A prompt decided (or expired) between the engine's stop and this park parks the
		// job all the same: whoever resumes parked jobs finds it decided at once.
		if pr.Status == PromptPending {
			pr.ParkedJob = id
			if ok, err := tx.UpdatePrompt(ctx, PromptPending, pr); err != nil || !ok {
				return cmp.Or(err, fmt.Errorf("%w: prompt %d changed", ErrConflict, pr.ID))
			}
		}
		j.Pid, j.ProcStart, j.Parking, j.Run = 0, 0, &parking, &run
		if err := changeJob(ctx, tx, j); err != nil {
			return err
		}
		tellThread(ctx, tx, ThreadJob, id, ThreadUpdated, at)
		return nil
	})
}

// UnparkJob implements Jobs.
func (p *Portable) UnparkJob(ctx context.Context, id int64) (Job, error) {
	at := p.clock()
	var parked Job
	err := p.update(ctx, func(tx Tx) error {
		j, err := runningJob(ctx, tx, id)
		if err != nil {
			return err
		}
		if !j.Parked() {
			return fmt.Errorf("%w: job %d is not parked", ErrConflict, id)
		}
		parked = j
		j.Parking = nil
		if err := changeJob(ctx, tx, j); err != nil {
			return err
		}
		tellThread(ctx, tx, ThreadJob, id, ThreadUpdated, at)
		return nil
	})
	return parked, err
}

// runningJob reads job id inside tx: ErrNotFound unless it is running.
func runningJob(ctx context.Context, tx Tx, id int64) (Job, error) {
	j, err := tx.Job(ctx, id)
	if errors.Is(err, ErrNotFound) || err == nil && j.Status != JobRunning {
		return Job{}, fmt.Errorf("%w: running job %d", ErrNotFound, id)
	}
	return j, err
}

// Job implements Jobs.
func (p *Portable) Job(ctx context.Context, id int64) (Job, error) { return p.d.Job(ctx, id) }

// ListJobs implements Jobs.
func (p *Portable) ListJobs(ctx context.Context, status JobStatus) ([]Job, error) {
	return p.d.ListJobs(ctx, status)
}

// PageJobs implements Jobs.
func (p *Portable) PageJobs(ctx context.Context, f JobFilter) ([]Job, error) {
	var err error
	if f.Limit, err = listLimit(f.Limit); err != nil {
		return nil, err
	}
	if f.Status != "" && f.Status != JobRunning && f.Status != JobFinished {
		return nil, invalid("job status %q is unknown", f.Status)
	}
	if err := checkBeforeID(f.BeforeID); err != nil {
		return nil, err
	}
	return p.d.PageJobs(ctx, f)
}
