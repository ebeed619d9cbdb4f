package workerhub

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"google.golang.org/protobuf/types/known/durationpb"

	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/response"
)

// Errors of the job methods; compare with errors.Is.
var (
	// ErrNotConnected: no connected worker can take the message.
	ErrNotConnected = errors.New("worker not connected")
	// ErrInvalidJob: the job or its message is malformed; nothing was sent.
	ErrInvalidJob = errors.New("invalid job")
)

// jobQueue is how many job reports of one connection may wait for the sink before the
// connection stops reading.
const jobQueue = 64

// StartJob sends the job to a connected worker of key: the response's bound worker when b is
// non-nil and bound and connected, else any worker of the key (binding b if it is unbound).
// Returns the worker id, or an error when no worker of the key is connected. A worker that just
// connected gets the job once the sink has taken its first report (waiting at most until ctx
// ends).
func (h *Hub) StartJob(ctx context.Context, workerKey string, b *response.Binding, job jobs.WorkerJob) (workerID string, err error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := validateJob(job); err != nil {
		return "", err
	}
	c, err := h.pickForJob(workerKey, b)
	if err != nil {
		return "", err
	}
	select { // see conn.reported
	case <-c.reported:
	case <-c.gone:
		return "", fmt.Errorf("%w: worker %s disconnected", ErrNotConnected, c.ident.ID)
	case <-ctx.Done():
		return "", ctx.Err()
	}
	err = c.send(&workerv1.ConnectResponse{Event: &workerv1.ConnectResponse_StartJob{StartJob: &workerv1.StartJob{
		JobId: job.ID, Agent: job.Agent, Command: job.Command,
		Ceiling: durationpb.New(job.Ceiling), Grace: durationpb.New(job.Grace),
		AgentCliEnv: job.AgentCLIEnv, ExtraEnv: job.ExtraEnv, Traceparent: job.Traceparent, Tracestate: job.Tracestate,
	}}})
	if err != nil {
		return "", fmt.Errorf("%w: worker %s could not be reached: %v", ErrNotConnected, c.ident.ID, err)
	}
	return c.ident.ID, nil
}

// CancelJob asks a worker to stop a job; its jobs.WorkerSink.JobFinished follows. It fails when that worker is
// not connected.
func (h *Hub) CancelJob(workerID string, jobID int64) error {
	if jobID <= 0 {
		return fmt.Errorf("%w: job id %d", ErrInvalidJob, jobID)
	}
	return h.sendJob(workerID, &workerv1.ConnectResponse{Event: &workerv1.ConnectResponse_CancelJob{CancelJob: &workerv1.CancelJob{JobId: jobID}}})
}

// AttachJob asks a worker for a job's log from logOffset on, then its end (after a reconnect).
func (h *Hub) AttachJob(workerID string, jobID int64, logOffset int64) error {
	if jobID <= 0 || logOffset < 0 {
		return fmt.Errorf("%w: job id %d, log offset %d", ErrInvalidJob, jobID, logOffset)
	}
	return h.sendJob(workerID, &workerv1.ConnectResponse{Event: &workerv1.ConnectResponse_AttachJob{AttachJob: &workerv1.AttachJob{
		JobId: jobID, LogOffset: logOffset}}})
}

// AckJob tells a worker the job's result is saved: it deletes the job's record and files.
func (h *Hub) AckJob(workerID string, jobID int64) error {
	if jobID <= 0 {
		return fmt.Errorf("%w: job id %d", ErrInvalidJob, jobID)
	}
	return h.sendJob(workerID, &workerv1.ConnectResponse{Event: &workerv1.ConnectResponse_AckJob{AckJob: &workerv1.AckJob{JobId: jobID}}})
}

func (h *Hub) sendJob(workerID string, msg *workerv1.ConnectResponse) error {
	h.mu.Lock()
	c := h.byID[workerID]
	h.mu.Unlock()
	if c == nil {
		return fmt.Errorf("%w: %s", ErrNotConnected, workerID)
	}
	if err := c.send(msg); err != nil {
		return fmt.Errorf("%w: %s could not be reached: %v", ErrNotConnected, workerID, err)
	}
	return nil
}

// pickForJob returns the worker a job runs on: b's bound worker while it is connected, else the
// connected worker of key with the fewest commands (binding b to it if b is unbound). A job is
// not a command: command capacity does not exclude a worker.
func (h *Hub) pickForJob(key string, b *response.Binding) (*conn, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	bound := ""
	if b != nil {
		bound = b.WorkerID()
	}
	if c := h.byID[bound]; bound != "" && c != nil && c.ident.Key == key {
		return c, nil
	}
	var best *conn
	for _, c := range h.byKey[key] {
		if best == nil || c.load() < best.load() {
			best = c
		}
	}
	if best == nil {
		return nil, fmt.Errorf("%w: no worker with key %q is connected", ErrNotConnected, key)
	}
	if b != nil && bound == "" {
		b.Bind(best.ident.ID)
	}
	return best, nil
}

var (
	jobAgentCLIKeys = map[string]bool{"MINDROOM_AGENT_CLI_TOKEN": true, "MINDROOM_AGENT_CLI_WINDOW": true}
	jobExtraKey     = regexp.MustCompile(`^MINDROOM_AGENT_[A-Z_]+$`)
)

// validateJob refuses a job the worker would refuse or silently trim, so the caller learns of
// its mistake here.
func validateJob(j jobs.WorkerJob) error {
	switch {
	case j.ID <= 0:
		return fmt.Errorf("%w: the job id must be positive", ErrInvalidJob)
	case strings.TrimSpace(j.Command) == "":
		return fmt.Errorf("%w: the command is empty", ErrInvalidJob)
	case j.Agent == "":
		return fmt.Errorf("%w: a job needs an agent", ErrInvalidJob)
	case j.Ceiling <= 0 || j.Grace < 0:
		return fmt.Errorf("%w: the ceiling must be positive and the grace not negative", ErrInvalidJob)
	}
	for k := range j.AgentCLIEnv {
		if !jobAgentCLIKeys[k] {
			return fmt.Errorf("%w: %s is not an Agent CLI variable a job may get", ErrInvalidJob, k)
		}
	}
	for k := range j.ExtraEnv {
		if !jobExtraKey.MatchString(k) || strings.HasPrefix(k, "MINDROOM_AGENT_CLI_") {
			return fmt.Errorf("%w: %s cannot be passed to a job", ErrInvalidJob, k)
		}
	}
	return nil
}
