package dashboard

import (
	"net/http"
	"net/url"
	"strconv"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/primary/jobs"
)

// badge is how a job's state is labelled and coloured (class "s-<Class>" in the style sheet).
type badge struct{ Word, Class string }

// verdictClasses colour each verdict: green for success, red for a failure or a job that
// could not start, grey for a person's cancel, amber when nobody knows how it ended.
var verdictClasses = map[jobs.Verdict]string{
	jobs.VerdictSucceeded:  "succeeded",
	jobs.VerdictFailed:     "failed",
	jobs.VerdictNotStarted: "not-started",
	jobs.VerdictCancelled:  "cancelled",
	jobs.VerdictUnknown:    "unknown",
}

// jobBadge is the job's badge: running, or its finished outcome's verdict.
func jobBadge(j *operatorv1.Job) badge {
	if j.GetStatus() != operatorv1.JobStatus_JOB_STATUS_FINISHED {
		return badge{Word: shortEnum(j.GetStatus()), Class: "running"}
	}
	v := jobs.VerdictOf(j.GetOutcome())
	return badge{Word: string(v), Class: verdictClasses[v]}
}

// jobRan reports whether the job had a process, so a log to show and follow: a job that
// could not start has none.
func jobRan(j *operatorv1.Job) bool {
	return j.GetStatus() != operatorv1.JobStatus_JOB_STATUS_FINISHED || jobs.VerdictOf(j.GetOutcome()).Ran()
}

// jobFilter is the jobs list's filter, from the query string: status (running, finished or
// empty for both), channel and thread.
type jobFilter struct {
	Status, Channel, Thread string
}

func (f jobFilter) request() *operatorv1.ListJobsRequest {
	req := &operatorv1.ListJobsRequest{PageSize: 100}
	switch f.Status {
	case "running":
		req.Status = operatorv1.JobStatus_JOB_STATUS_RUNNING
	case "finished":
		req.Status = operatorv1.JobStatus_JOB_STATUS_FINISHED
	}
	if f.Channel != "" {
		req.Conversation = &conversationv1.Conversation{Channel: f.Channel, Thread: f.Thread}
	}
	return req
}

// Query is the filter as a query string, for the list fragment the page fetches again.
func (f jobFilter) Query() string {
	v := url.Values{}
	for k, s := range map[string]string{"status": f.Status, "channel": f.Channel, "thread": f.Thread} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return v.Encode()
}

type jobsData struct {
	Filter jobFilter
	Jobs   []*operatorv1.Job
}

func (s *Server) loadJobs(q *request) (jobsData, error) {
	v := q.r.URL.Query()
	f := jobFilter{Status: v.Get("status"), Channel: v.Get("channel"), Thread: v.Get("thread")}
	resp, err := s.op.ListJobs(q.ctx, f.request())
	return jobsData{Filter: f, Jobs: resp.GetJobs()}, err
}

func (s *Server) loadJob(q *request) (*operatorv1.Job, error) {
	id, err := q.id()
	if err != nil {
		return nil, err
	}
	resp, err := s.op.GetJob(q.ctx, &operatorv1.GetJobRequest{JobId: id})
	return resp.GetJob(), err
}

func (s *Server) job(q *request) error {
	j, err := s.loadJob(q)
	if err != nil {
		return err
	}
	s.render(q, 200, "job", "Job "+strconv.FormatUint(j.GetId(), 10), j)
	return nil
}

// logChunk is how much of a job's log one fetch reads.
const logChunk = 64 << 10

// jobLog answers the next piece of a job's log as escaped HTML. The page passes the offset
// and the colour state the previous piece ended with (X-Log-Offset, X-Log-State), and final
// once the job has finished, so a sequence cut at the very end is dropped rather than kept.
func (s *Server) jobLog(q *request) error {
	id, err := q.id()
	if err != nil {
		return err
	}
	v := q.r.URL.Query()
	offset, _ := strconv.ParseUint(v.Get("offset"), 10, 64)
	body, err := s.op.GetJobLog(q.ctx, &operatorv1.GetJobLogRequest{JobId: id, Offset: offset, Limit: logChunk})
	if err != nil {
		return err
	}
	data := body.GetData()
	more := v.Get("final") == "" || len(data) == logChunk
	html, st, used := renderANSI(parseSGRState(v.Get("state")), data, more)
	h := q.w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("X-Log-Offset", strconv.FormatUint(offset+uint64(used), 10))
	h.Set("X-Log-State", st.classes())
	q.w.WriteHeader(http.StatusOK)
	_, _ = q.w.Write([]byte(html))
	return nil
}

func (s *Server) cancelJob(q *request) error {
	id, err := q.id()
	if err != nil {
		return err
	}
	if _, err := s.op.CancelJob(q.ctx, &operatorv1.CancelJobRequest{JobId: id}); err != nil {
		return err
	}
	return s.redirect(q, "/ui/jobs/"+strconv.FormatUint(id, 10), "The job was told to stop.")
}
