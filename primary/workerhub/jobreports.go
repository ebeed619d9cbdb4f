package workerhub

import (
	"context"
	"fmt"
	"strings"

	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/internal/bashexec"
	"github.com/turncli/turncli/primary/jobs"
)

// jobEvent is one job report for the sink, made under the connection's context.
type jobEvent func(context.Context, jobs.WorkerSink)

// helloJobs checks the jobs a Hello reports and converts them.
func helloJobs(in []*workerv1.JobState) ([]jobs.WorkerJobState, error) {
	out := make([]jobs.WorkerJobState, 0, len(in))
	seen := make(map[int64]bool, len(in))
	for _, st := range in {
		id := st.GetJobId()
		switch {
		case id <= 0:
			return nil, fmt.Errorf("%w: Hello.jobs holds job id %d", errProtocol, id)
		case seen[id]:
			return nil, fmt.Errorf("%w: Hello.jobs holds job %d twice", errProtocol, id)
		case !st.GetRunning() && st.GetExit() == nil:
			return nil, fmt.Errorf("%w: Hello.jobs holds finished job %d without its exit", errProtocol, id)
		}
		seen[id] = true
		js := jobs.WorkerJobState{ID: id, Running: st.GetRunning()}
		if !js.Running {
			js.Exit = jobExit(st.GetExit())
		}
		out = append(out, js)
	}
	return out, nil
}

func jobExit(e *workerv1.JobExit) jobs.WorkerJobExit {
	return jobs.WorkerJobExit{
		Code: int(e.GetCode()), CodeKnown: e.GetCodeKnown(), TimedOut: e.GetTimedOut(), Cancelled: e.GetCancelled(),
		OutputLimit: e.GetOutputLimit(),
		StartError:  boundedError(e.GetStartError()),
	}
}

// boundedError keeps a worker's error text to maxWorkerErrorBytes of valid UTF-8.
func boundedError(msg string) string {
	if len(msg) > maxWorkerErrorBytes {
		return strings.ToValidUTF8(msg[:maxWorkerErrorBytes], "") + "…"
	}
	return strings.ToValidUTF8(msg, "")
}

// jobReport checks a job message from the worker and returns the sink call it makes.
func (c *conn) jobReport(msg *workerv1.ConnectRequest) (jobEvent, error) {
	worker := c.ident.ID
	switch ev := msg.GetEvent().(type) {
	case *workerv1.ConnectRequest_JobStarted:
		id := ev.JobStarted.GetJobId()
		if id <= 0 {
			return nil, fmt.Errorf("%w: JobStarted for job id %d", errProtocol, id)
		}
		return func(ctx context.Context, s jobs.WorkerSink) { s.JobStarted(ctx, worker, id) }, nil
	case *workerv1.ConnectRequest_JobOutput:
		o := ev.JobOutput
		id, off, data := o.GetJobId(), o.GetOffset(), o.GetData()
		switch {
		case id <= 0:
			return nil, fmt.Errorf("%w: JobOutput for job id %d", errProtocol, id)
		case off < 0 || off > 1<<62:
			return nil, fmt.Errorf("%w: JobOutput of job %d at offset %d", errProtocol, id, off)
		case len(data) > bashexec.ChunkSize:
			return nil, fmt.Errorf("%w: a job output chunk over %d bytes", errProtocol, bashexec.ChunkSize)
		}
		return func(ctx context.Context, s jobs.WorkerSink) { s.JobOutput(ctx, worker, id, off, data) }, nil
	case *workerv1.ConnectRequest_JobFinished:
		id := ev.JobFinished.GetJobId()
		switch {
		case id <= 0:
			return nil, fmt.Errorf("%w: JobFinished for job id %d", errProtocol, id)
		case ev.JobFinished.GetExit() == nil:
			return nil, fmt.Errorf("%w: JobFinished of job %d without its exit", errProtocol, id)
		}
		exit := jobExit(ev.JobFinished.GetExit())
		return func(ctx context.Context, s jobs.WorkerSink) { s.JobFinished(ctx, worker, id, exit) }, nil
	}
	return nil, nil
}

// queueJob hands a report to the connection's dispatcher, in order. It waits while the queue
// is full, and gives up when the connection has ended.
func (c *conn) queueJob(ev jobEvent) error {
	select {
	case c.jobEvents <- ev:
		return nil
	case <-c.done:
		return errConnectionEnded
	}
}

// dispatchJobs calls the sink with the connection's reports, after the worker's previous
// connection's dispatcher has finished, until the receive loop closes the queue. Each call gets
// ctx, the connection's context: reports still queued when the connection ends are delivered
// under a cancelled ctx, so the sink knows the worker is no longer there to answer.
func (h *Hub) dispatchJobs(ctx context.Context, c *conn) {
	defer func() {
		h.mu.Lock()
		if h.jobChain[c.ident.ID] == c.jobsDone {
			delete(h.jobChain, c.ident.ID)
		}
		h.mu.Unlock()
		close(c.jobsDone)
	}()
	if c.prevJobs != nil {
		<-c.prevJobs
	}
	for ev := range c.jobEvents {
		ev(ctx, c.sink)
	}
}
