package store

import (
	"context"
	"time"

	"github.com/turncli/turncli/internal/fault"
)

// Jobs keeps background jobs: what was launched, the process that runs it, and its result.
// A job is created running, gets its process recorded once started, and is finished exactly
// once; finishing and enqueuing the job's continuation are one transaction.
type Jobs interface {
	// CreateJob checks the caps against the running jobs and inserts j as running, in one
	// transaction. It returns ErrJobCapReached or ErrThreadJobCapReached (wrapped) when a cap is
	// already reached, and inserts nothing.
	CreateJob(ctx context.Context, j NewJob, caps JobCaps) (Job, error)
	// SetJobWorker records the worker (by its id, required) that runs a running job.
	// ErrNotFound when no running job has id.
	SetJobWorker(ctx context.Context, id int64, workerID string) error
	// RequestJobCancel records that a running job is to be cancelled when it can be (its
	// worker is away). ErrNotFound when no running job has id.
	RequestJobCancel(ctx context.Context, id int64) error
	// SetJobProcess records the process of a running job: its pid and the process start time
	// (clock ticks since boot, /proc/<pid>/stat field 22). ErrNotFound when no running job has id.
	SetJobProcess(ctx context.Context, id int64, pid int, procStart uint64) error
	// FinishJob saves r on a running job and enqueues c, in one transaction. A job finished
	// already keeps its first result; c is then enqueued only if its key is new (so a second
	// finish never adds a second continuation). finished reports whether this call saved the
	// result; created whether it added the continuation. ErrNotFound when the job never existed.
	FinishJob(ctx context.Context, id int64, r JobResult, c NewContinuation) (finished, created bool, err error)
	// ParkJob parks a running agent job on a permission prompt, in one transaction: the job
	// forgets its process and keeps p and run (its status stays running, so it keeps its place
	// under the caps), and a pending prompt names the job. A prompt decided meanwhile parks it
	// too, to be resumed at once. ErrNotFound when no running job has id or no prompt has
	// p.PromptID; ErrConflict when the job is parked already or the prompt holds another.
	ParkJob(ctx context.Context, id int64, p Parking, run EngineRun) error
	// UnparkJob takes the parking off a parked job so that it runs again, and returns the job
	// as it was parked. ErrNotFound when no running job has id; ErrConflict when it is not
	// parked (someone else resumed it).
	UnparkJob(ctx context.Context, id int64) (Job, error)
	// FinishParkedJob is FinishJob for a parked job (cancelled, or given up because it cannot
	// resume): it ends without running again. ErrConflict when it is not parked.
	FinishParkedJob(ctx context.Context, id int64, r JobResult, c NewContinuation) (finished, created bool, err error)
	// Job returns one job; ErrNotFound when it does not exist.
	Job(ctx context.Context, id int64) (Job, error)
	// ListJobs returns every job with the status (every job when empty), newest first.
	ListJobs(ctx context.Context, status JobStatus) ([]Job, error)
	// PageJobs returns one page of the jobs matching f, newest first.
	PageJobs(ctx context.Context, f JobFilter) ([]Job, error)
}

// JobFilter selects jobs; empty fields match everything.
type JobFilter struct {
	Status JobStatus
	// Thread is compared only when Channel is set (an empty thread is a channel's main
	// timeline).
	Channel, Thread string
	// BeforeID, when positive, returns only older jobs (smaller ids): the id of the last job
	// of the previous page.
	BeforeID int64
	// Limit is at most 1000; zero means 100.
	Limit int
}

// Job cap errors; compare with errors.Is.
var (
	// ErrJobCapReached: the primary already runs its maximum of jobs.
	ErrJobCapReached = fault.New(fault.LimitExceeded, "the maximum number of running jobs is reached")
	// ErrThreadJobCapReached: the conversation already runs its maximum of jobs.
	ErrThreadJobCapReached = fault.New(fault.LimitExceeded, "the maximum number of running jobs in this conversation is reached")
)

// JobStatus is a job's state.
type JobStatus string

// The job states.
const (
	JobRunning  JobStatus = "running"
	JobFinished JobStatus = "finished"
)

// JobCaps bound the running jobs; a zero field means no bound.
type JobCaps struct {
	Total     int // in all
	PerThread int // per (channel, thread)
}

// NewJob is a job to create.
type NewJob struct {
	Kind    string // "command" or "agent"
	Command string // required
	Label   string
	Channel string // required
	Thread  string
	Author  string
	Agent   string
	// Workspace is the job's working directory, on the host that runs it.
	Workspace string
	// WorkerKey names the workers that run the job; empty runs it on the primary's own host.
	WorkerKey string
	Ceiling   time.Duration
	// LogDir holds the job's full log, named <id>.log; required.
	LogDir string
	// Engine names the engine driver of an agent job (claude, codex), whose result line the
	// primary reads; empty for commands and for engines that only print their report.
	Engine string
}

// JobResult is how a job ended.
type JobResult struct {
	// Outcome is the plain-language outcome ("success", "stopped at the time limit", …).
	Outcome string
	// ExitCode is nil when unknown (never started, or re-attached after a restart).
	ExitCode *int
	// Tail is the last output.
	Tail string
	// Run is how the engine's run went (jobs with an Engine), summed over the runs of a job
	// that was parked and resumed; nil when unknown.
	Run *EngineRun
}

// Job is a stored job.
type Job struct {
	ID int64
	NewJob
	Status JobStatus
	// WorkerID is the worker running it (worker jobs); empty until recorded.
	WorkerID string
	// CancelRequested: a cancel waits for the job's worker to come back.
	CancelRequested bool
	// Pid and ProcStart are zero until the process is recorded (primary-local jobs).
	Pid       int
	ProcStart uint64
	// LogPath is the full log file, <LogDir>/<id>.log.
	LogPath   string
	CreatedAt time.Time
	// EndedAt is zero while running.
	EndedAt time.Time
	JobResult
	// Parking is set while the job is parked: its status stays running (it counts against the
	// caps) but no process runs until people decide the prompt it waits on.
	Parking *Parking
}

// Parked reports whether the job waits, with no process, for people's decision.
func (j Job) Parked() bool { return j.Parking != nil }
