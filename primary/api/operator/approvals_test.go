package operator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/primary/store"
)

// saveApproval saves a pending approval of command for room/<thread>.
func saveApproval(t *testing.T, e *apiEnv, thread, command string) store.Approval {
	t.Helper()
	a, created, err := e.store.SaveApproval(context.Background(), store.NewApproval{
		Kind: "command", Channel: "room", Thread: thread, Author: "sam", Command: command,
		Workdir: "primary:/srv/app", Ceiling: time.Hour, Label: "deploy", Agent: "code",
	})
	if err != nil || !created {
		t.Fatalf("SaveApproval = %v, created %v", err, created)
	}
	return a
}

func setAuto(t *testing.T, e *apiEnv, thread string) {
	t.Helper()
	if _, err := e.store.SetConversationMode(context.Background(), "room", thread, store.ModeAuto, "ada"); err != nil {
		t.Fatal(err)
	}
}

func decide(id int64, d operatorv1.Decision, text string) *operatorv1.DecideApprovalRequest {
	return &operatorv1.DecideApprovalRequest{ApprovalId: uint64(id), Decision: d, Text: text}
}

const (
	approve = operatorv1.Decision_DECISION_APPROVE
	deny    = operatorv1.Decision_DECISION_DENY
	comment = operatorv1.Decision_DECISION_COMMENT
)

func TestApprovalsAPI(t *testing.T) {
	ctx := context.Background()
	e := startAPI(t)
	setAuto(t, e, "t1")

	t.Run("MemberReadsAPendingApprovalAsSaved", func(t *testing.T) {
		a := saveApproval(t, e, "t1", "make deploy")
		got, err := e.member.GetApproval(ctx, &operatorv1.GetApprovalRequest{ApprovalId: uint64(a.ID)})
		if err != nil {
			t.Fatal(err)
		}
		p := got.GetApproval()
		if p.GetId() != uint64(a.ID) || p.GetStatus() != operatorv1.ApprovalStatus_APPROVAL_STATUS_PENDING ||
			p.GetKind() != operatorv1.JobKind_JOB_KIND_COMMAND || p.GetCommand() != "make deploy" ||
			p.GetWorkdir() != "primary:/srv/app" || p.GetCeiling().AsDuration() != time.Hour || p.GetLabel() != "deploy" ||
			p.GetAuthor() != "sam" || p.GetAgent() != "code" || p.GetConversation().GetThread() != "t1" ||
			p.GetCreatedAt() == nil || p.GetDecidedAt() != nil || p.GetDecidedBy() != "" || p.GetJobId() != 0 {
			t.Fatalf("GetApproval = %v", p)
		}
	})

	t.Run("CommentKeepsItPendingAndIsShownToEveryone", func(t *testing.T) {
		a := saveApproval(t, e, "t1", "make comment-me")
		got, err := e.member.DecideApproval(ctx, decide(a.ID, comment, "  please add --dry-run first \n"))
		if err != nil {
			t.Fatal(err)
		}
		p := got.GetApproval()
		if p.GetStatus() != operatorv1.ApprovalStatus_APPROVAL_STATUS_PENDING || len(p.GetComments()) != 1 ||
			p.GetComments()[0].GetActor() != "mia" || p.GetComments()[0].GetText() != "please add --dry-run first" ||
			p.GetComments()[0].GetAt() == nil {
			t.Fatalf("after comment = %v", p)
		}
		read, err := e.admin.GetApproval(ctx, &operatorv1.GetApprovalRequest{ApprovalId: uint64(a.ID)})
		if err != nil || len(read.GetApproval().GetComments()) != 1 {
			t.Fatalf("GetApproval = %v, %v; want the comment", read, err)
		}
	})

	t.Run("DecisionTextIsChecked", func(t *testing.T) {
		a := saveApproval(t, e, "t1", "make text-checks")
		for _, c := range []struct {
			name string
			req  *operatorv1.DecideApprovalRequest
		}{
			{"blank comment", decide(a.ID, comment, " \t ")},
			{"comment over 2000 bytes", decide(a.ID, comment, strings.Repeat("x", 2001))},
			{"deny reason over 2000 bytes", decide(a.ID, deny, strings.Repeat("é", 1001))},
			{"approval with text", decide(a.ID, approve, "ok")},
			{"no decision", decide(a.ID, operatorv1.Decision_DECISION_UNSPECIFIED, "")},
		} {
			_, err := e.admin.DecideApproval(ctx, c.req)
			wantCode(t, c.name, err, codes.InvalidArgument)
		}
		if _, err := e.admin.DecideApproval(ctx, decide(a.ID, comment, strings.Repeat("x", 2000))); err != nil {
			t.Fatalf("comment of exactly 2000 bytes: %v", err)
		}
	})

	t.Run("DecisionsOnlyPromptsTakeAreRefusedNamingTheApprovalOnes", func(t *testing.T) {
		a := saveApproval(t, e, "t1", "make decision-checks")
		for _, d := range []operatorv1.Decision{operatorv1.Decision_DECISION_ALLOW_ONCE,
			operatorv1.Decision_DECISION_ALLOW_THREAD, operatorv1.Decision_DECISION_ALLOW_CONVERSATION, 99} {
			_, err := e.admin.DecideApproval(ctx, decide(a.ID, d, ""))
			wantRefusedNaming(t, d.String(), err, "an approval takes DECISION_APPROVE, DECISION_DENY or DECISION_COMMENT, not "+d.String())
		}
	})

	t.Run("MemberCannotApprove", func(t *testing.T) {
		a := saveApproval(t, e, "t1", "make member-approves")
		_, err := e.member.DecideApproval(ctx, decide(a.ID, approve, ""))
		wantCode(t, "member approves", err, codes.PermissionDenied)
		if msg := status.Convert(err).Message(); !strings.Contains(msg, "only an admin can approve") {
			t.Fatalf("message %q does not name the rule", msg)
		}
		got, err := e.store.Approval(ctx, a.ID)
		if err != nil || got.Status != store.ApprovalPending {
			t.Fatalf("after a member's approve: %v, %v; want pending", got.Status, err)
		}
	})

	t.Run("AdminApprovesOnceAndAReplayIsAborted", func(t *testing.T) {
		a := saveApproval(t, e, "t1", "make release")
		got, err := e.admin.DecideApproval(ctx, decide(a.ID, approve, ""))
		if err != nil {
			t.Fatal(err)
		}
		p := got.GetApproval()
		if p.GetStatus() != operatorv1.ApprovalStatus_APPROVAL_STATUS_CONSUMED || p.GetJobId() == 0 ||
			p.GetDecidedBy() != "ada" || p.GetDecidedAt() == nil || p.GetSettledAt() == nil {
			t.Fatalf("after approve = %v", p)
		}
		job, err := e.member.GetJob(ctx, &operatorv1.GetJobRequest{JobId: p.GetJobId()})
		if err != nil || job.GetJob().GetCommand() != "make release" || job.GetJob().GetStatus() != operatorv1.JobStatus_JOB_STATUS_RUNNING {
			t.Fatalf("approved job = %v, %v", job, err)
		}
		for _, d := range []operatorv1.Decision{approve, deny, comment} {
			_, err := e.admin.DecideApproval(ctx, decide(a.ID, d, map[operatorv1.Decision]string{comment: "late"}[d]))
			wantCode(t, "replayed "+d.String(), err, codes.Aborted)
			if msg, want := status.Convert(err).Message(), fmt.Sprintf("approval %d was already decided: consumed", a.ID); msg != want {
				t.Fatalf("replay message %q, want %q", msg, want)
			}
		}
		list, err := e.member.ListJobs(ctx, &operatorv1.ListJobsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, j := range list.GetJobs() {
			if j.GetCommand() == "make release" {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d jobs run the approved command, want exactly one", n)
		}
		audit, err := e.admin.ListAuditLog(ctx, &operatorv1.ListAuditLogRequest{Subject: store.ApprovalSubject(a.ID), Action: store.ActionApprovalApprove})
		if err != nil || len(audit.GetEntries()) != 1 || audit.GetEntries()[0].GetActor() != "ada" {
			t.Fatalf("approve audit = %v, %v; want one entry by ada", audit, err)
		}
	})

	t.Run("MemberDeniesWithAReasonAndItStaysDenied", func(t *testing.T) {
		a := saveApproval(t, e, "t1", "rm -rf build")
		got, err := e.member.DecideApproval(ctx, decide(a.ID, deny, "not on a Friday"))
		if err != nil {
			t.Fatal(err)
		}
		p := got.GetApproval()
		if p.GetStatus() != operatorv1.ApprovalStatus_APPROVAL_STATUS_DENIED || p.GetNote() != "not on a Friday" ||
			p.GetDecidedBy() != "mia" || p.GetJobId() != 0 {
			t.Fatalf("after deny = %v", p)
		}
		_, err = e.admin.DecideApproval(ctx, decide(a.ID, approve, ""))
		wantCode(t, "approve after deny", err, codes.Aborted)
		if msg := status.Convert(err).Message(); !strings.HasSuffix(msg, "already decided: denied") {
			t.Fatalf("message %q", msg)
		}
		audit, err := e.admin.ListAuditLog(ctx, &operatorv1.ListAuditLogRequest{Subject: store.ApprovalSubject(a.ID)})
		if err != nil || len(audit.GetEntries()) != 1 || audit.GetEntries()[0].GetAction() != store.ActionApprovalDeny ||
			audit.GetEntries()[0].GetActor() != "mia" {
			t.Fatalf("deny audit = %v, %v; want the one denial by mia", audit, err)
		}
	})

	t.Run("GateThatNowRefusesIsAFailedPrecondition", func(t *testing.T) {
		a := saveApproval(t, e, "t9", "make in-ask-mode") // room/t9 was never set to auto
		_, err := e.admin.DecideApproval(ctx, decide(a.ID, approve, ""))
		wantCode(t, "approve in ask mode", err, codes.FailedPrecondition)
		if msg := status.Convert(err).Message(); !strings.Contains(msg, "no longer in auto mode") {
			t.Fatalf("message %q does not say why", msg)
		}
		got, err := e.member.GetApproval(ctx, &operatorv1.GetApprovalRequest{ApprovalId: uint64(a.ID)})
		if err != nil || got.GetApproval().GetStatus() != operatorv1.ApprovalStatus_APPROVAL_STATUS_FAILED ||
			!strings.Contains(got.GetApproval().GetNote(), "auto mode") {
			t.Fatalf("after refusal = %v, %v", got, err)
		}
	})

	t.Run("JobCapReachedIsAFailedPrecondition", func(t *testing.T) {
		setAuto(t, e, "t3")
		createJob(t, e, "t3")
		e.approvals.caps = store.JobCaps{PerThread: 1}
		defer func() { e.approvals.caps = store.JobCaps{Total: 20, PerThread: 3} }()
		a := saveApproval(t, e, "t3", "make over-cap")
		_, err := e.admin.DecideApproval(ctx, decide(a.ID, approve, ""))
		wantCode(t, "approve over the thread cap", err, codes.FailedPrecondition)
		if msg := status.Convert(err).Message(); !strings.Contains(msg, "maximum number of running jobs") {
			t.Fatalf("message %q does not say why", msg)
		}
	})

	t.Run("UnknownApprovalIsNotFound", func(t *testing.T) {
		for _, id := range []uint64{0, 999, 1 << 63} {
			_, err := e.member.GetApproval(ctx, &operatorv1.GetApprovalRequest{ApprovalId: id})
			wantCode(t, fmt.Sprintf("GetApproval %d", id), err, codes.NotFound)
			_, err = e.admin.DecideApproval(ctx, &operatorv1.DecideApprovalRequest{ApprovalId: id, Decision: approve})
			wantCode(t, fmt.Sprintf("approve %d", id), err, codes.NotFound)
			_, err = e.member.DecideApproval(ctx, &operatorv1.DecideApprovalRequest{ApprovalId: id, Decision: deny})
			wantCode(t, fmt.Sprintf("deny %d", id), err, codes.NotFound)
		}
	})

	t.Run("ListApprovalsFiltersNewestFirst", func(t *testing.T) {
		all, err := e.member.ListApprovals(ctx, &operatorv1.ListApprovalsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var ids []uint64
		for _, a := range all.GetApprovals() {
			ids = append(ids, a.GetId())
		}
		if len(ids) < 2 || !slices.IsSortedFunc(ids, func(a, b uint64) int { return int(b) - int(a) }) {
			t.Fatalf("ListApprovals ids %v, want several, newest first", ids)
		}
		for _, c := range []struct {
			name string
			req  *operatorv1.ListApprovalsRequest
			ok   func(*operatorv1.Approval) bool
		}{
			{"denied", &operatorv1.ListApprovalsRequest{Status: operatorv1.ApprovalStatus_APPROVAL_STATUS_DENIED},
				func(a *operatorv1.Approval) bool {
					return a.GetStatus() == operatorv1.ApprovalStatus_APPROVAL_STATUS_DENIED
				}},
			{"room/t9", &operatorv1.ListApprovalsRequest{Conversation: &conversationv1.Conversation{Channel: "room", Thread: "t9"}},
				func(a *operatorv1.Approval) bool { return a.GetConversation().GetThread() == "t9" }},
		} {
			got, err := e.member.ListApprovals(ctx, c.req)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.GetApprovals()) != 1 || !c.ok(got.GetApprovals()[0]) {
				t.Fatalf("%s: %v, want exactly one match", c.name, got)
			}
		}
		one, err := e.member.ListApprovals(ctx, &operatorv1.ListApprovalsRequest{PageSize: 1})
		if err != nil || len(one.GetApprovals()) != 1 || one.GetApprovals()[0].GetId() != ids[0] {
			t.Fatalf("page_size 1 = %v, %v; want the newest", one, err)
		}
		_, err = e.member.ListApprovals(ctx, &operatorv1.ListApprovalsRequest{PageSize: 1001})
		wantCode(t, "page_size 1001", err, codes.InvalidArgument)
		_, err = e.member.ListApprovals(ctx, &operatorv1.ListApprovalsRequest{Conversation: &conversationv1.Conversation{Thread: "t1"}})
		wantCode(t, "thread without channel", err, codes.InvalidArgument)
	})
}

func TestApprovalsREST(t *testing.T) {
	e := startAPI(t)
	setAuto(t, e, "t1")
	path := func(id int64) string { return fmt.Sprintf("/v1/operator/approvals/%d:decide", id) }
	// jsonCode is the gRPC code in a gateway error body.
	jsonCode := func(t *testing.T, r restResponse) codes.Code {
		t.Helper()
		var body struct {
			Code codes.Code `json:"code"`
		}
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatalf("error body %q is not JSON: %v", r.body, err)
		}
		return body.Code
	}

	t.Run("MemberApprovingIsForbidden", func(t *testing.T) {
		a := saveApproval(t, e, "t1", "make rest-member")
		r := e.do(t, http.MethodPost, path(a.ID), e.memberToken, `{"decision":"DECISION_APPROVE"}`)
		if r.code != http.StatusForbidden || jsonCode(t, r) != codes.PermissionDenied {
			t.Fatalf("member approve = %d %s, want 403", r.code, r.body)
		}
	})

	t.Run("ReplayIsAConflict", func(t *testing.T) {
		a := saveApproval(t, e, "t1", "make rest-replay")
		r := e.do(t, http.MethodPost, path(a.ID), e.adminToken, `{"decision":"DECISION_APPROVE"}`)
		var ok struct {
			Approval struct {
				Status string `json:"status"`
				JobID  string `json:"job_id"`
			} `json:"approval"`
		}
		if err := json.Unmarshal(r.body, &ok); err != nil || r.code != http.StatusOK ||
			ok.Approval.Status != "APPROVAL_STATUS_CONSUMED" || ok.Approval.JobID == "0" {
			t.Fatalf("approve = %d %s (%v)", r.code, r.body, err)
		}
		r = e.do(t, http.MethodPost, path(a.ID), e.adminToken, `{"decision":"DECISION_APPROVE"}`)
		if r.code != http.StatusConflict || jsonCode(t, r) != codes.Aborted {
			t.Fatalf("replayed approve = %d %s, want 409", r.code, r.body)
		}
	})

	t.Run("UnknownApprovalIsNotFound", func(t *testing.T) {
		r := e.do(t, http.MethodPost, path(999), e.memberToken, `{"decision":"DECISION_DENY"}`)
		if r.code != http.StatusNotFound {
			t.Fatalf("deny unknown = %d %s, want 404", r.code, r.body)
		}
		if r := e.do(t, http.MethodGet, "/v1/operator/approvals/999", e.memberToken, ""); r.code != http.StatusNotFound {
			t.Fatalf("GET unknown = %d %s, want 404", r.code, r.body)
		}
	})

	t.Run("OverLongTextIsABadRequest", func(t *testing.T) {
		a := saveApproval(t, e, "t1", "make rest-long")
		body, _ := json.Marshal(map[string]string{"decision": "DECISION_COMMENT", "text": strings.Repeat("x", 2001)})
		r := e.do(t, http.MethodPost, path(a.ID), e.memberToken, string(body))
		if r.code != http.StatusBadRequest || jsonCode(t, r) != codes.InvalidArgument {
			t.Fatalf("over-long comment = %d %s, want 400", r.code, r.body)
		}
	})

	t.Run("CommentAndReadBack", func(t *testing.T) {
		a := saveApproval(t, e, "t1", "make rest-comment")
		r := e.do(t, http.MethodPost, path(a.ID), e.memberToken, `{"decision":"DECISION_COMMENT","text":"why?"}`)
		if r.code != http.StatusOK {
			t.Fatalf("comment = %d %s", r.code, r.body)
		}
		r = e.do(t, http.MethodGet, fmt.Sprintf("/v1/operator/approvals/%d", a.ID), e.memberToken, "")
		var got struct {
			Approval struct {
				Status   string `json:"status"`
				Comments []struct {
					Actor string `json:"actor"`
					Text  string `json:"text"`
				} `json:"comments"`
			} `json:"approval"`
		}
		if err := json.Unmarshal(r.body, &got); err != nil || r.code != http.StatusOK || got.Approval.Status != "APPROVAL_STATUS_PENDING" ||
			len(got.Approval.Comments) != 1 || got.Approval.Comments[0].Actor != "mia" || got.Approval.Comments[0].Text != "why?" {
			t.Fatalf("GET approval = %d %s (%v)", r.code, r.body, err)
		}
		r = e.do(t, http.MethodGet, "/v1/operator/approvals?status=APPROVAL_STATUS_PENDING&conversation.channel=room&conversation.thread=t1", e.memberToken, "")
		var list struct {
			Approvals []struct {
				Status string `json:"status"`
			} `json:"approvals"`
		}
		if err := json.Unmarshal(r.body, &list); err != nil || r.code != http.StatusOK || len(list.Approvals) == 0 {
			t.Fatalf("GET approvals = %d %s (%v)", r.code, r.body, err)
		}
		for _, a := range list.Approvals {
			if a.Status != "APPROVAL_STATUS_PENDING" {
				t.Fatalf("GET pending approvals listed %s", r.body)
			}
		}
	})
}
