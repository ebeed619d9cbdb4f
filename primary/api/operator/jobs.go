package operator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/protobuf/types/known/durationpb"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/store"
)

// Jobs is the background jobs engine as the operator API sees it.
type Jobs interface {
	// Page returns one page of the jobs matching f, newest first (as store.Jobs.PageJobs).
	Page(ctx context.Context, f store.JobFilter) ([]jobs.Job, error)
	// Get returns one job; store.ErrNotFound when it does not exist.
	Get(ctx context.Context, id int64) (jobs.Job, error)
	// Cancel asks a running job to stop and returns without waiting for it; an error wrapping
	// jobs.ErrNotRunning when the job is not running (finished, or not attached to this
	// primary), store.ErrNotFound when it does not exist.
	Cancel(ctx context.Context, id int64) error
}

// LogReader is implemented by a jobs engine that knows secret values a log may hold: it reads
// a job's log with them masked in place (the read keeps its length, so paging by offsets
// works), and the log is never read past it.
type LogReader interface {
	ReadLog(id int64, path string, offset uint64, limit int) ([]byte, error)
}

// ActionJobCancel is the audit action of an operator's cancel: detail {"job": id}.
const ActionJobCancel = "job.cancel"

// JobSubject is the audit subject of a job.
func JobSubject(id int64) string { return "job/" + strconv.FormatInt(id, 10) }

// ListJobs implements OperatorService.
func (s *Server) ListJobs(ctx context.Context, req *operatorv1.ListJobsRequest) (*operatorv1.ListJobsResponse, error) {
	if _, err := caller(ctx, false, ""); err != nil {
		return nil, err
	}
	st, ok := jobStatusFromProto[req.GetStatus()]
	if !ok {
		return nil, fault.New(fault.InvalidArgument, "status must be JOB_STATUS_RUNNING, JOB_STATUS_FINISHED or unset")
	}
	channel, thread, err := conversationFilter(req.GetConversation())
	if err != nil {
		return nil, err
	}
	pg, limit, before, err := idPage("jobs", req.GetPageSize(), req.GetPageToken(), string(st), channel, thread)
	if err != nil {
		return nil, err
	}
	list, err := s.jobs.Page(ctx, store.JobFilter{Status: st, Channel: channel, Thread: thread, BeforeID: before, Limit: limit})
	if err != nil {
		return nil, err
	}
	resp := &operatorv1.ListJobsResponse{}
	resp.Jobs, resp.NextPageToken = encodeIDPage(pg, limit, list, func(j jobs.Job) int64 { return j.ID }, jobToProto)
	return resp, nil
}

// GetJob implements OperatorService.
func (s *Server) GetJob(ctx context.Context, req *operatorv1.GetJobRequest) (*operatorv1.GetJobResponse, error) {
	if _, err := caller(ctx, false, ""); err != nil {
		return nil, err
	}
	j, err := s.job(ctx, req.GetJobId())
	if err != nil {
		return nil, err
	}
	return &operatorv1.GetJobResponse{Job: jobToProto(j)}, nil
}

// CancelJob implements OperatorService. The audit entry is appended once the engine has taken
// the cancel, so the log never records a cancel that did not happen.
func (s *Server) CancelJob(ctx context.Context, req *operatorv1.CancelJobRequest) (*operatorv1.CancelJobResponse, error) {
	op, err := caller(ctx, false, "")
	if err != nil {
		return nil, err
	}
	j, err := s.job(ctx, req.GetJobId())
	if err != nil {
		return nil, err
	}
	if j.Status != store.JobRunning {
		return nil, fault.Newf(fault.FailedPrecondition, "job %d has already finished (%s); there is nothing to cancel", j.ID, j.Outcome)
	}
	if err := s.jobs.Cancel(ctx, j.ID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, notFound("job", req.GetJobId())
		}
		return nil, err // jobs.ErrNotRunning: FAILED_PRECONDITION, saying why
	}
	detail, err := json.Marshal(map[string]int64{"job": j.ID})
	if err != nil {
		id := fault.Hide(ctx, s.logger, err, "job cancel audit encoding failed", "operator", op.Name, "job", j.ID)
		return nil, fault.Hidden(id, fmt.Sprintf("job %d was told to stop, but its audit entry could not be encoded", j.ID))
	}
	// The cancel happened: record it even if the caller has gone meanwhile.
	if _, err := s.store.AppendAudit(context.WithoutCancel(ctx), store.NewAuditEntry{
		Actor: op.Name, Action: ActionJobCancel, Subject: JobSubject(j.ID), Detail: detail,
	}); err != nil {
		id := fault.Hide(ctx, s.logger, err, "job cancel audit failed", "operator", op.Name, "job", j.ID)
		return nil, fault.Hidden(id, fmt.Sprintf("job %d was told to stop, but its audit entry could not be written", j.ID))
	}
	s.logger.Info("job cancelled", "operator", op.Name, "job", j.ID)
	if after, err := s.jobs.Get(ctx, j.ID); err == nil {
		j = after
	}
	return &operatorv1.CancelJobResponse{Job: jobToProto(j)}, nil
}

// job returns the job the API id names, mapping a missing job to NOT_FOUND.
func (s *Server) job(ctx context.Context, apiID uint64) (jobs.Job, error) {
	return readRecord(apiID, "job", func(id int64) (jobs.Job, error) {
		return s.jobs.Get(ctx, id)
	})
}

// GetJobLog implements OperatorService.
func (s *Server) GetJobLog(ctx context.Context, req *operatorv1.GetJobLogRequest) (*httpbody.HttpBody, error) {
	if _, err := caller(ctx, false, ""); err != nil {
		return nil, err
	}
	limit := maxLogRead
	if n := req.GetLimit(); n != 0 {
		if n > maxLogRead {
			return nil, fault.Newf(fault.InvalidArgument, "limit must be 1..%d bytes", maxLogRead)
		}
		limit = int(n)
	}
	j, err := s.job(ctx, req.GetJobId())
	if err != nil {
		return nil, err
	}
	var data []byte
	if r, ok := s.jobs.(LogReader); ok {
		data, err = r.ReadLog(j.ID, j.LogPath, req.GetOffset(), limit)
	} else {
		data, err = readLog(j.LogPath, req.GetOffset(), limit)
	}
	if err != nil {
		id := fault.Hide(ctx, s.logger, err, "job log read failed", "job", j.ID)
		return nil, fault.Hidden(id, fmt.Sprintf("the log of job %d could not be read", j.ID))
	}
	return &httpbody.HttpBody{ContentType: logContentType, Data: data}, nil
}

var jobStatusFromProto = map[operatorv1.JobStatus]store.JobStatus{
	operatorv1.JobStatus_JOB_STATUS_UNSPECIFIED: "",
	operatorv1.JobStatus_JOB_STATUS_RUNNING:     store.JobRunning,
	operatorv1.JobStatus_JOB_STATUS_FINISHED:    store.JobFinished,
}

func jobKindToProto(kind string) operatorv1.JobKind {
	switch kind {
	case "command":
		return operatorv1.JobKind_JOB_KIND_COMMAND
	case "agent":
		return operatorv1.JobKind_JOB_KIND_AGENT
	}
	return operatorv1.JobKind_JOB_KIND_UNSPECIFIED
}

func jobToProto(j jobs.Job) *operatorv1.Job {
	out := &operatorv1.Job{
		Id:           uint64(j.ID),
		Kind:         jobKindToProto(j.Kind),
		Label:        j.Label,
		Command:      j.Command,
		Conversation: conversationToProto(j.Channel, j.Thread),
		Author:       j.Author,
		Agent:        j.Agent,
		Location:     &operatorv1.Location{WorkerKey: j.WorkerKey, WorkerId: j.WorkerID},
		Status:       operatorv1.JobStatus_JOB_STATUS_RUNNING,
		Outcome:      j.Outcome,
		CreatedAt:    timestamp(j.CreatedAt),
		EndedAt:      timestamp(j.EndedAt),
		Runtime:      durationpb.New(j.Runtime),
		Tail:         j.Tail,
	}
	if j.Status == store.JobFinished {
		out.Status = operatorv1.JobStatus_JOB_STATUS_FINISHED
	}
	if j.ExitCode != nil {
		code := int32(*j.ExitCode)
		out.ExitCode = &code
	}
	out.Engine = j.Engine
	if r := j.Run; r != nil {
		out.EngineRun = &operatorv1.EngineRun{
			SessionId: r.Session, Turns: int32(r.Turns), CostUsd: r.CostUSD, InputTokens: r.InputTokens,
			OutputTokens: r.OutputTokens, StopReason: r.StopReason, IsError: r.IsError, Errors: r.Errors, Runs: int32(r.Runs),
		}
	}
	if p := j.Parking; p != nil {
		out.Parked = &operatorv1.ParkedJob{PromptId: uint64(p.PromptID), Tool: p.Tool}
	}
	return out
}
