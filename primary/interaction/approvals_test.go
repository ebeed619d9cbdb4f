package interaction_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/primary/store"
)

// TestApprovalsThroughOperatorService decides durable approvals as real operators over the
// primary's gRPC listener, with the credentials the primary issued, and checks what each
// decision does to the approval, the jobs and the conversation.
func TestApprovalsThroughOperatorService(t *testing.T) {
	env := start(t)
	ctx := context.Background()
	admin := operatorClient(t, env, firstAdminToken(t, env)) // "admin", created by the primary
	member := operatorClient(t, env, addOperator(t, env, memberAuthor, store.RoleMember))

	const thread = "$approvals"
	conv := &conversationv1.Conversation{Channel: channel, Thread: thread}
	setModeAs := func(t *testing.T, mode operatorv1.Mode) {
		t.Helper()
		if _, err := admin.SetConversationMode(ctx, &operatorv1.SetConversationModeRequest{Conversation: conv, Mode: mode}); err != nil {
			t.Fatalf("SetConversationMode %v: %v", mode, err)
		}
	}
	setModeAs(t, operatorv1.Mode_MODE_AUTO)
	id := openAs(t, env, stranger, thread)

	out := t.TempDir()
	appendOnce := filepath.Join(out, "appended")
	appendRace := filepath.Join(out, "raced")
	request := func(t *testing.T, command, label string) int64 {
		t.Helper()
		ap, _ := pendingApproval(t, callTool(t, env, id, "interaction.run_in_background",
			jsonArgs(t, map[string]any{"command": command, "label": label})))
		return ap
	}
	apAppend := request(t, "echo ran >> "+bashQuote(appendOnce), "append")
	apDeny := request(t, "echo never", "to deny")
	apRace := request(t, "echo raced >> "+bashQuote(appendRace), "race")

	decide := func(c operatorv1.OperatorServiceClient, ap int64, d operatorv1.Decision, text string) (*operatorv1.Approval, error) {
		resp, err := c.DecideApproval(ctx, &operatorv1.DecideApprovalRequest{ApprovalId: uint64(ap), Decision: d, Text: text})
		return resp.GetApproval(), err
	}
	statusOf := func(t *testing.T, ap int64) store.Approval {
		t.Helper()
		a, err := env.Primary.Internals().Store.Approval(ctx, ap)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	wantCode := func(t *testing.T, err error, code codes.Code) {
		t.Helper()
		if status.Code(err) != code {
			t.Fatalf("got %v, want %v", err, code)
		}
	}
	lines := func(t *testing.T, path string) []string {
		t.Helper()
		b, err := os.ReadFile(path)
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	}

	t.Run("AMembersApproveIsPermissionDenied", func(t *testing.T) {
		_, err := decide(member, apAppend, operatorv1.Decision_DECISION_APPROVE, "")
		wantCode(t, err, codes.PermissionDenied)
		if a := statusOf(t, apAppend); a.Status != store.ApprovalPending || a.JobID != 0 {
			t.Errorf("after a member's approve: %s with job %d, want pending", a.Status, a.JobID)
		}
	})

	t.Run("ACommentKeepsItPendingAndIsRelayed", func(t *testing.T) {
		got, err := decide(member, apAppend, operatorv1.Decision_DECISION_COMMENT, "  please name the file better  ")
		if err != nil {
			t.Fatal(err)
		}
		if got.GetStatus() != operatorv1.ApprovalStatus_APPROVAL_STATUS_PENDING || len(got.GetComments()) != 1 ||
			got.GetComments()[0].GetText() != "please name the file better" || got.GetComments()[0].GetActor() != memberAuthor {
			t.Errorf("after a comment: %v", got)
		}
		prefix := "approval:" + itoa(apAppend) + ":comment-"
		c := waitContinuationMatching(t, env, prefix+"…", func(k string) bool { return strings.HasPrefix(k, prefix) })
		if c.Channel != channel || c.Thread != thread || c.Post ||
			!strings.Contains(c.Text, memberAuthor) || !strings.Contains(c.Text, "please name the file better") ||
			!strings.Contains(c.Text, "still waiting") {
			t.Errorf("comment continuation = %+v", c)
		}
	})

	t.Run("ApprovingAfterTheModeWentBackToAskIsRefusedAndItStaysPending", func(t *testing.T) {
		setModeAs(t, operatorv1.Mode_MODE_ASK)
		_, err := decide(admin, apAppend, operatorv1.Decision_DECISION_APPROVE, "")
		wantCode(t, err, codes.FailedPrecondition)
		if !strings.Contains(status.Convert(err).Message(), "mode is now ask") {
			t.Errorf("refusal does not say why: %v", err)
		}
		if a := statusOf(t, apAppend); a.Status != store.ApprovalPending || a.JobID != 0 || a.DecidedBy != "" {
			t.Errorf("after a refused approve: %+v, want untouched pending", a)
		}
		if n := len(jobsIn(t, env, thread)); n != 0 {
			t.Errorf("a refused approve started %d jobs", n)
		}
		setModeAs(t, operatorv1.Mode_MODE_AUTO)
	})

	var jobID int64
	t.Run("AnAdminsApproveStartsTheCommandOnce", func(t *testing.T) {
		got, err := decide(admin, apAppend, operatorv1.Decision_DECISION_APPROVE, "")
		if err != nil {
			t.Fatal(err)
		}
		if got.GetStatus() != operatorv1.ApprovalStatus_APPROVAL_STATUS_CONSUMED || got.GetJobId() == 0 || got.GetDecidedBy() != "admin" {
			t.Fatalf("after approve: %v", got)
		}
		jobID = int64(got.GetJobId())
		c := waitContinuation(t, env, jobKey(jobID))
		j := waitJob(t, env, jobID)
		if j.Command != "echo ran >> "+bashQuote(appendOnce) || j.Author != stranger || j.Label != "append" || j.Outcome != "success" {
			t.Errorf("approved job = %+v", j.Job)
		}
		if got := lines(t, appendOnce); len(got) != 1 || got[0] != "ran" {
			t.Errorf("the approved command ran %d times: %q", len(got), got)
		}
		if c.Thread != thread || c.Post || !strings.Contains(c.Text, `"append" (job `+itoa(jobID)+`) finished: success`) {
			t.Errorf("job continuation = %+v", c)
		}
	})

	t.Run("AReplayedApproveIsAborted", func(t *testing.T) {
		_, err := decide(admin, apAppend, operatorv1.Decision_DECISION_APPROVE, "")
		wantCode(t, err, codes.Aborted)
		if n := len(jobsIn(t, env, thread)); n != 1 {
			t.Errorf("jobs after a replay = %d, want 1", n)
		}
		if a := statusOf(t, apAppend); a.Status != store.ApprovalConsumed || a.JobID != jobID {
			t.Errorf("after a replay: %s job %d, want consumed job %d", a.Status, a.JobID, jobID)
		}
		if got := lines(t, appendOnce); len(got) != 1 {
			t.Errorf("the approved command ran %d times", len(got))
		}
	})

	t.Run("ADenialIsToldToTheConversation", func(t *testing.T) {
		got, err := decide(member, apDeny, operatorv1.Decision_DECISION_DENY, "not today")
		if err != nil {
			t.Fatal(err)
		}
		if got.GetStatus() != operatorv1.ApprovalStatus_APPROVAL_STATUS_DENIED || got.GetDecidedBy() != memberAuthor {
			t.Errorf("after deny: %v", got)
		}
		c := waitContinuation(t, env, "approval:"+itoa(apDeny)+":denied")
		if c.Thread != thread || c.Post || !strings.Contains(c.Text, "denied") || !strings.Contains(c.Text, "not today") ||
			!strings.Contains(c.Text, "Do not run it another way") {
			t.Errorf("denial continuation = %+v", c)
		}
		_, err = decide(admin, apDeny, operatorv1.Decision_DECISION_APPROVE, "")
		wantCode(t, err, codes.Aborted)
		if n := len(jobsIn(t, env, thread)); n != 1 {
			t.Errorf("jobs after approving a denied request = %d, want 1", n)
		}
	})

	t.Run("ConcurrentApprovesStartItOnce", func(t *testing.T) {
		const n = 4
		codesSeen := make([]codes.Code, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				_, err := decide(admin, apRace, operatorv1.Decision_DECISION_APPROVE, "")
				codesSeen[i] = status.Code(err)
			})
		}
		wg.Wait()
		ok := 0
		for _, c := range codesSeen {
			switch c {
			case codes.OK:
				ok++
			case codes.Aborted:
			default:
				t.Errorf("a concurrent approve got %v, want OK or Aborted", c)
			}
		}
		if ok != 1 {
			t.Fatalf("%d approves succeeded, want 1 (%v)", ok, codesSeen)
		}
		a := statusOf(t, apRace)
		if a.Status != store.ApprovalConsumed || a.JobID == 0 {
			t.Fatalf("after approve: %+v", a)
		}
		waitContinuation(t, env, jobKey(a.JobID))
		if got := lines(t, appendRace); len(got) != 1 {
			t.Errorf("the approved command ran %d times", len(got))
		}
		if n := len(jobsIn(t, env, thread)); n != 2 {
			t.Errorf("jobs in the conversation = %d, want 2", n)
		}
	})
}
