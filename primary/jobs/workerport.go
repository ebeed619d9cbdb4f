package jobs

import (
	"context"
	"time"

	"github.com/turncli/turncli/primary/response"
)

// The worker port: what this engine needs from the transport that carries jobs to workers
// (Workers, implemented by workerhub.Hub), what it hands that transport (WorkerJob) and what
// the transport reports back (WorkerSink, implemented by Manager). The transport imports these
// types; this package never imports the transport.

// Workers carries jobs to workers (workerhub.Hub).
type Workers interface {
	// StartJob sends job to a connected worker of workerKey (b's bound worker first, binding an
	// unbound b) and returns that worker's id.
	StartJob(ctx context.Context, workerKey string, b *response.Binding, job WorkerJob) (workerID string, err error)
	// CancelJob asks the worker holding the job to stop it; its WorkerSink.JobFinished follows.
	CancelJob(workerID string, jobID int64) error
	// AttachJob asks the worker for the job's log from logOffset on, then its end.
	AttachJob(workerID string, jobID int64, logOffset int64) error
	// AckJob tells the worker the job's result is saved, so it may forget the job.
	AckJob(workerID string, jobID int64) error
}

// WorkerSink receives what workers report about jobs. Calls for one job come in order.
//
// The calls for one worker connection are made in order on one goroutine of their own, after
// every call for that worker's previous connection, and never on the goroutine that relays
// command output: a slow sink delays only job reports, until the transport's queue of them is
// full. A sink may call the Workers methods from its callbacks.
//
// Every call's ctx is the reporting connection's: it ends when that connection does (the
// worker went away, was replaced, or the primary stops), possibly before or during the call,
// since reports already received are still delivered. A write that must outlive the
// connection derives its own context from it.
type WorkerSink interface {
	// WorkerJobs: a worker (key, id) connected and still holds these jobs (from its hello).
	// Called before any other call for that connection.
	WorkerJobs(ctx context.Context, workerKey, workerID string, jobs []WorkerJobState)
	// JobStarted: the worker runs a job sent with StartJob; its output from offset 0 follows.
	JobStarted(ctx context.Context, workerID string, jobID int64)
	// JobOutput: bytes of a job's log at offset. After a reconnect the same bytes may come
	// again (from the AttachJob offset), so write them at their offset.
	JobOutput(ctx context.Context, workerID string, jobID int64, offset int64, data []byte)
	// JobFinished: how a job ended (or why it could not start). The worker reports it again
	// after each reconnect until AckJob.
	JobFinished(ctx context.Context, workerID string, jobID int64, exit WorkerJobExit)
}

// WorkerJob is a background job to run on a worker.
type WorkerJob struct {
	// ID is the primary's durable id of the job, positive.
	ID int64
	// Agent names the workspace; Command runs as `bash -lc`.
	Agent, Command string
	// Ceiling (positive) is measured from the start; Grace is the TERM→KILL delay (zero: the
	// worker's default).
	Ceiling, Grace time.Duration
	// AgentCLIEnv may hold only MINDROOM_AGENT_CLI_TOKEN and MINDROOM_AGENT_CLI_WINDOW;
	// ExtraEnv only names matching ^MINDROOM_AGENT_[A-Z_]+$ outside MINDROOM_AGENT_CLI_*.
	AgentCLIEnv, ExtraEnv map[string]string
	// Traceparent and Tracestate are the trace context of the call that started the job; the
	// worker hands them to the job.
	Traceparent, Tracestate string
}

// WorkerJobState is a job a worker holds.
type WorkerJobState struct {
	ID      int64
	Running bool
	// Exit is how it ended, when not Running.
	Exit WorkerJobExit
}

// WorkerJobExit is how a job on a worker ended.
type WorkerJobExit struct {
	// Code is the exit status (128+N for signal N), valid when CodeKnown.
	Code                                        int
	CodeKnown, TimedOut, Cancelled, OutputLimit bool
	// StartError says why it could not start; empty when it started.
	StartError string
}
