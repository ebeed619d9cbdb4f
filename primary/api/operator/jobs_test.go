package operator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/faultgrpc"
	"github.com/turncli/turncli/primary/api/operator"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/store"
)

// createJob records a running job (a command in room/<thread> unless edit says otherwise).
func createJob(t *testing.T, e *apiEnv, thread string, edit ...func(*store.NewJob)) store.Job {
	t.Helper()
	nj := store.NewJob{Kind: "command", Command: "make test", Label: "tests", Channel: "room", Thread: thread,
		Author: "sam", Agent: "code", Workspace: t.TempDir(), LogDir: t.TempDir()}
	for _, f := range edit {
		f(&nj)
	}
	j, err := e.store.CreateJob(context.Background(), nj, store.JobCaps{})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// finishJob saves a result on a running job.
func finishJob(t *testing.T, e *apiEnv, id int64, r store.JobResult) {
	t.Helper()
	if _, _, err := e.store.FinishJob(context.Background(), id, r, store.NewContinuation{
		IdempotencyKey: fmt.Sprintf("job:%d", id), Channel: "room", Text: "done"}); err != nil {
		t.Fatal(err)
	}
}

func jobIDs(js []*operatorv1.Job) []int64 {
	ids := make([]int64, len(js))
	for i, j := range js {
		ids[i] = int64(j.GetId())
	}
	return ids
}

func TestJobsAPI(t *testing.T) {
	ctx := context.Background()
	e := startAPI(t)
	running := createJob(t, e, "t1")
	remote := createJob(t, e, "t2", func(j *store.NewJob) { j.Kind, j.WorkerKey = "agent", "gpu" })
	if err := e.store.SetJobWorker(ctx, remote.ID, "gpu-1"); err != nil {
		t.Fatal(err)
	}
	done := createJob(t, e, "t1")
	zero := 0
	finishJob(t, e, done.ID, store.JobResult{Outcome: jobs.OutcomeSuccess, ExitCode: &zero, Tail: "all tests passed\n"})

	t.Run("MemberListsJobsNewestFirst", func(t *testing.T) {
		got, err := e.member.ListJobs(ctx, &operatorv1.ListJobsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if ids := jobIDs(got.GetJobs()); !slices.Equal(ids, []int64{done.ID, remote.ID, running.ID}) || got.GetNextPageToken() != "" {
			t.Fatalf("ListJobs = %v (next %q), want ids %d, %d, %d and no next page", ids, got.GetNextPageToken(), done.ID, remote.ID, running.ID)
		}
	})

	t.Run("ListJobsFiltersByStatusAndConversation", func(t *testing.T) {
		for _, c := range []struct {
			name string
			req  *operatorv1.ListJobsRequest
			want []int64
		}{
			{"running", &operatorv1.ListJobsRequest{Status: operatorv1.JobStatus_JOB_STATUS_RUNNING}, []int64{remote.ID, running.ID}},
			{"finished", &operatorv1.ListJobsRequest{Status: operatorv1.JobStatus_JOB_STATUS_FINISHED}, []int64{done.ID}},
			{"room/t1", &operatorv1.ListJobsRequest{Conversation: &conversationv1.Conversation{Channel: "room", Thread: "t1"}}, []int64{done.ID, running.ID}},
			{"room main timeline", &operatorv1.ListJobsRequest{Conversation: &conversationv1.Conversation{Channel: "room"}}, []int64{}},
			{"running in room/t1", &operatorv1.ListJobsRequest{Status: operatorv1.JobStatus_JOB_STATUS_RUNNING,
				Conversation: &conversationv1.Conversation{Channel: "room", Thread: "t1"}}, []int64{running.ID}},
		} {
			got, err := e.member.ListJobs(ctx, c.req)
			if err != nil {
				t.Fatal(err)
			}
			if ids := jobIDs(got.GetJobs()); !slices.Equal(ids, c.want) {
				t.Fatalf("%s: ids %v, want %v", c.name, ids, c.want)
			}
		}
		_, err := e.member.ListJobs(ctx, &operatorv1.ListJobsRequest{Conversation: &conversationv1.Conversation{Thread: "t1"}})
		wantCode(t, "thread without channel", err, codes.InvalidArgument)
	})

	t.Run("ListJobsPagesByToken", func(t *testing.T) {
		first, err := e.member.ListJobs(ctx, &operatorv1.ListJobsRequest{PageSize: 2})
		if err != nil {
			t.Fatal(err)
		}
		second, err := e.member.ListJobs(ctx, &operatorv1.ListJobsRequest{PageSize: 2, PageToken: first.GetNextPageToken()})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(jobIDs(first.GetJobs()), []int64{done.ID, remote.ID}) || first.GetNextPageToken() == "" ||
			!slices.Equal(jobIDs(second.GetJobs()), []int64{running.ID}) || second.GetNextPageToken() != "" {
			t.Fatalf("pages %v then %v", first, second)
		}
		_, err = e.member.ListJobs(ctx, &operatorv1.ListJobsRequest{PageSize: 1001})
		wantCode(t, "page_size 1001", err, codes.InvalidArgument)
		_, err = e.member.ListJobs(ctx, &operatorv1.ListJobsRequest{PageToken: "x"})
		wantCode(t, "foreign page token", err, codes.InvalidArgument)
	})

	t.Run("GetJobSaysWhereItRunsAndHowItEnded", func(t *testing.T) {
		got, err := e.member.GetJob(ctx, &operatorv1.GetJobRequest{JobId: uint64(done.ID)})
		if err != nil {
			t.Fatal(err)
		}
		j := got.GetJob()
		if j.GetStatus() != operatorv1.JobStatus_JOB_STATUS_FINISHED || j.GetOutcome() != jobs.OutcomeSuccess ||
			j.ExitCode == nil || j.GetExitCode() != 0 || j.GetTail() != "all tests passed\n" || j.GetEndedAt() == nil ||
			j.GetKind() != operatorv1.JobKind_JOB_KIND_COMMAND || j.GetCommand() != "make test" || j.GetLabel() != "tests" ||
			j.GetConversation().GetThread() != "t1" || j.GetAuthor() != "sam" || j.GetAgent() != "code" ||
			j.GetLocation().GetWorkerKey() != "" || j.GetRuntime() == nil {
			t.Fatalf("finished job = %v", j)
		}
		got, err = e.member.GetJob(ctx, &operatorv1.GetJobRequest{JobId: uint64(remote.ID)})
		if err != nil {
			t.Fatal(err)
		}
		j = got.GetJob()
		if j.GetStatus() != operatorv1.JobStatus_JOB_STATUS_RUNNING || j.ExitCode != nil || j.GetEndedAt() != nil ||
			j.GetKind() != operatorv1.JobKind_JOB_KIND_AGENT ||
			j.GetLocation().GetWorkerKey() != "gpu" || j.GetLocation().GetWorkerId() != "gpu-1" {
			t.Fatalf("worker job = %v", j)
		}
	})

	t.Run("UnknownJobIsNotFound", func(t *testing.T) {
		for _, id := range []uint64{0, 999, 1 << 63} {
			_, err := e.member.GetJob(ctx, &operatorv1.GetJobRequest{JobId: id})
			wantCode(t, fmt.Sprintf("GetJob %d", id), err, codes.NotFound)
			_, err = e.member.GetJobLog(ctx, &operatorv1.GetJobLogRequest{JobId: id})
			wantCode(t, fmt.Sprintf("GetJobLog %d", id), err, codes.NotFound)
			_, err = e.member.CancelJob(ctx, &operatorv1.CancelJobRequest{JobId: id})
			wantCode(t, fmt.Sprintf("CancelJob %d", id), err, codes.NotFound)
		}
	})

	log := "line one\nline two\n"
	if err := os.WriteFile(running.LogPath, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}

	t.Run("GetJobLogReturnsTheRequestedRange", func(t *testing.T) {
		for _, c := range []struct {
			offset uint64
			limit  uint32
			want   string
		}{{0, 0, log}, {5, 3, "one"}, {9, 0, "line two\n"}, {uint64(len(log)), 0, ""}, {1 << 40, 10, ""}} {
			got, err := e.member.GetJobLog(ctx, &operatorv1.GetJobLogRequest{JobId: uint64(running.ID), Offset: c.offset, Limit: c.limit})
			if err != nil {
				t.Fatal(err)
			}
			if string(got.GetData()) != c.want || got.GetContentType() != "text/plain; charset=utf-8" {
				t.Fatalf("offset %d limit %d: %q (%s), want %q", c.offset, c.limit, got.GetData(), got.GetContentType(), c.want)
			}
		}
		_, err := e.member.GetJobLog(ctx, &operatorv1.GetJobLogRequest{JobId: uint64(running.ID), Limit: 1<<20 + 1})
		wantCode(t, "limit over 1 MiB", err, codes.InvalidArgument)
	})

	t.Run("LogNotWrittenYetIsEmpty", func(t *testing.T) {
		if _, err := os.Stat(remote.LogPath); !os.IsNotExist(err) {
			t.Fatalf("log %s exists (%v)", filepath.Base(remote.LogPath), err)
		}
		got, err := e.member.GetJobLog(ctx, &operatorv1.GetJobLogRequest{JobId: uint64(remote.ID)})
		if err != nil || len(got.GetData()) != 0 {
			t.Fatalf("GetJobLog = %q, %v; want empty", got.GetData(), err)
		}
	})

	t.Run("ALogThatCannotBeReadIsAnInternalErrorNamingItsLogLine", func(t *testing.T) {
		if err := os.Mkdir(remote.LogPath, 0o700); err != nil { // a directory reads as no log
			t.Fatal(err)
		}
		defer os.Remove(remote.LogPath)
		_, err := e.member.GetJobLog(ctx, &operatorv1.GetJobLogRequest{JobId: uint64(remote.ID)})
		st := status.Convert(err)
		id := faultgrpc.HiddenID(st)
		want := fmt.Sprintf("the log of job %d could not be read (id %s); see the primary's log", remote.ID, id)
		if st.Code() != codes.Internal || id == "" || st.Message() != want {
			t.Fatalf("GetJobLog = %v %q (id %q), want Internal %q", st.Code(), st.Message(), id, want)
		}
		r := e.do(t, http.MethodGet, fmt.Sprintf("/v1/operator/jobs/%d/log", remote.ID), e.memberToken, "")
		var body struct {
			Message string
			Details []struct {
				Type      string `json:"@type"`
				RequestID string `json:"request_id"`
			}
		}
		if err := json.Unmarshal(r.body, &body); err != nil || r.code != http.StatusInternalServerError ||
			!strings.Contains(body.Message, "could not be read (id ") || len(body.Details) != 1 ||
			body.Details[0].Type != "type.googleapis.com/google.rpc.RequestInfo" || body.Details[0].RequestID == "" || !strings.Contains(body.Message, body.Details[0].RequestID) {
			t.Fatalf("GET log = %d %s, want 500 naming the id in its message and a RequestInfo", r.code, r.body)
		}
	})

	t.Run("GetJobLogOverRESTIsTheRawBytes", func(t *testing.T) {
		r := e.do(t, http.MethodGet, fmt.Sprintf("/v1/operator/jobs/%d/log?offset=5&limit=3", running.ID), e.memberToken, "")
		if r.code != http.StatusOK || string(r.body) != "one" || r.header.Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Fatalf("GET log = %d %q (%s)", r.code, r.body, r.header.Get("Content-Type"))
		}
	})

	t.Run("ListJobsOverRESTFiltersByStatus", func(t *testing.T) {
		r := e.do(t, http.MethodGet, "/v1/operator/jobs?status=JOB_STATUS_FINISHED", e.memberToken, "")
		var got struct {
			Jobs []struct {
				ID       string `json:"id"`
				Status   string `json:"status"`
				ExitCode *int   `json:"exit_code"`
			} `json:"jobs"`
		}
		if err := json.Unmarshal(r.body, &got); err != nil || r.code != http.StatusOK {
			t.Fatalf("GET jobs = %d %s (%v)", r.code, r.body, err)
		}
		if len(got.Jobs) != 1 || got.Jobs[0].ID != fmt.Sprint(done.ID) || got.Jobs[0].Status != "JOB_STATUS_FINISHED" ||
			got.Jobs[0].ExitCode == nil || *got.Jobs[0].ExitCode != 0 {
			t.Fatalf("GET jobs = %s", r.body)
		}
		if r := e.do(t, http.MethodGet, "/v1/operator/jobs/999", e.memberToken, ""); r.code != http.StatusNotFound {
			t.Fatalf("GET unknown job = %d %s, want 404", r.code, r.body)
		}
	})

	t.Run("MemberCancelsARunningJobAndTheAuditNamesThem", func(t *testing.T) {
		got, err := e.member.CancelJob(ctx, &operatorv1.CancelJobRequest{JobId: uint64(running.ID)})
		if err != nil {
			t.Fatal(err)
		}
		if got.GetJob().GetId() != uint64(running.ID) || got.GetJob().GetOutcome() != jobs.OutcomeCancelled {
			t.Fatalf("CancelJob = %v", got)
		}
		audit, err := e.admin.ListAuditLog(ctx, &operatorv1.ListAuditLogRequest{Subject: operator.JobSubject(running.ID)})
		if err != nil {
			t.Fatal(err)
		}
		if len(audit.GetEntries()) != 1 {
			t.Fatalf("audit = %v, want one entry", audit)
		}
		a := audit.GetEntries()[0]
		var detail map[string]int64
		if err := json.Unmarshal([]byte(a.GetDetailJson()), &detail); err != nil {
			t.Fatal(err)
		}
		if a.GetActor() != "mia" || a.GetAction() != "job.cancel" || a.GetSubject() != fmt.Sprintf("job/%d", running.ID) ||
			detail["job"] != running.ID {
			t.Fatalf("audit entry = %v", a)
		}
	})

	t.Run("CancellingAFinishedJobIsAFailedPrecondition", func(t *testing.T) {
		for _, id := range []int64{done.ID, running.ID} {
			_, err := e.member.CancelJob(ctx, &operatorv1.CancelJobRequest{JobId: uint64(id)})
			wantCode(t, fmt.Sprintf("cancel finished job %d", id), err, codes.FailedPrecondition)
			if msg := status.Convert(err).Message(); !strings.Contains(msg, "already finished") {
				t.Fatalf("message %q does not say the job finished", msg)
			}
		}
		audit, err := e.admin.ListAuditLog(ctx, &operatorv1.ListAuditLogRequest{Action: operator.ActionJobCancel})
		if err != nil {
			t.Fatal(err)
		}
		if len(audit.GetEntries()) != 1 {
			t.Fatalf("audit = %v, want only the one cancel that happened", audit)
		}
		r := e.do(t, http.MethodPost, fmt.Sprintf("/v1/operator/jobs/%d:cancel", done.ID), e.memberToken, "{}")
		if r.code != http.StatusBadRequest {
			t.Fatalf("POST cancel of a finished job = %d %s, want 400", r.code, r.body)
		}
	})

	t.Run("CancelOfAJobNotRunningHereIsAFailedPrecondition", func(t *testing.T) {
		e.jobs.detached = map[int64]bool{remote.ID: true}
		defer func() { e.jobs.detached = nil }()
		_, err := e.member.CancelJob(ctx, &operatorv1.CancelJobRequest{JobId: uint64(remote.ID)})
		wantCode(t, "cancel of a job not attached", err, codes.FailedPrecondition)
		if msg := status.Convert(err).Message(); !strings.Contains(msg, "not attached") {
			t.Fatalf("message %q does not say why", msg)
		}
	})
}
