package operator_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/faultgrpc"
	"github.com/turncli/turncli/primary/api/operator"
	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/memory"
	"github.com/turncli/turncli/primary/toolkits/testtk"
)

// callAPI is OperatorService with a real call approvals engine over the test toolkit and a
// real store, behind the real authenticator.
type callAPI struct {
	st            *memory.Store
	admin, member operatorv1.OperatorServiceClient
}

func startCallAPI(t *testing.T) *callAPI {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st := memory.Open(memory.Options{})
	t.Cleanup(func() { st.Close() })
	reg := catalog.NewRegistry()
	if err := reg.Register(ctx, testtk.New()); err != nil {
		t.Fatal(err)
	}
	adminToken, memberToken := mustAdd(t, st, "ada", store.RoleAdmin), mustAdd(t, st, "mia", store.RoleMember)
	auth := operator.NewAuthenticator(st)
	gs := grpc.NewServer(grpc.ChainUnaryInterceptor(faultgrpc.UnaryServerInterceptor(nil), auth.UnaryInterceptor()))
	operatorv1.RegisterOperatorServiceServer(gs, newServer(t, testEngines(t, st, dir, reg)))
	lis := bufconn.Listen(1 << 20)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	return &callAPI{
		st:     st,
		admin:  operatorv1.NewOperatorServiceClient(dialBufconn(t, lis, adminToken)),
		member: operatorv1.NewOperatorServiceClient(dialBufconn(t, lis, memberToken)),
	}
}

// waitingCall saves a waiting call of test.echo-like confirm_echo whose response is gone.
func (a *callAPI) waitingCall(t *testing.T, thread string) store.CallApproval {
	t.Helper()
	rec, err := a.st.SaveCallApproval(context.Background(), store.NewCallApproval{
		CallID: uuid.NewString(), Toolkit: testtk.Name, Function: "confirm_echo", Arguments: `{"x":1}`,
		BashCallID: "bash-1", ResponseID: "gone", Agent: "coder", Requester: "@sam", Channel: "room", Thread: thread,
		Checkpoint: []byte("secret-ish checkpoint"),
	})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func decideCall(id int64, d operatorv1.Decision, note string) *operatorv1.DecideCallApprovalRequest {
	return &operatorv1.DecideCallApprovalRequest{CallApprovalId: uint64(id), Decision: d, Note: note}
}

const (
	approveCall = operatorv1.Decision_DECISION_APPROVE
	denyCall    = operatorv1.Decision_DECISION_DENY
)

func TestCallApprovalsAPI(t *testing.T) {
	ctx := context.Background()
	a := startCallAPI(t)

	t.Run("MemberReadsAWaitingCallAsSaved", func(t *testing.T) {
		rec := a.waitingCall(t, "t1")
		got, err := a.member.GetCallApproval(ctx, &operatorv1.GetCallApprovalRequest{CallApprovalId: uint64(rec.ID)})
		if err != nil {
			t.Fatal(err)
		}
		c := got.GetCallApproval()
		if c.GetStatus() != operatorv1.CallApprovalStatus_CALL_APPROVAL_STATUS_WAITING || c.GetCallId() != rec.CallID ||
			c.GetToolkit() != "test" || c.GetFunction() != "confirm_echo" || c.GetArgumentsJson() != `{"x":1}` ||
			c.GetBashCallId() != "bash-1" || c.GetConversation().GetThread() != "t1" || c.GetCreatedAt() == nil || c.GetDecidedAt() != nil {
			t.Fatalf("got %v", c)
		}
	})
	t.Run("ListFiltersByStatusAndConversation", func(t *testing.T) {
		rec := a.waitingCall(t, "list")
		got, err := a.member.ListCallApprovals(ctx, &operatorv1.ListCallApprovalsRequest{
			Status:       operatorv1.CallApprovalStatus_CALL_APPROVAL_STATUS_WAITING,
			Conversation: &conversationv1.Conversation{Channel: "room", Thread: "list"},
		})
		if err != nil || len(got.GetCallApprovals()) != 1 || got.GetCallApprovals()[0].GetId() != uint64(rec.ID) {
			t.Fatalf("list: %v, %v", got, err)
		}
		if _, err := a.member.ListCallApprovals(ctx, &operatorv1.ListCallApprovalsRequest{Status: 99}); status.Code(err) != codes.InvalidArgument {
			t.Fatalf("unknown status: %v", err)
		}
	})
	t.Run("AMemberCannotApprove", func(t *testing.T) {
		rec := a.waitingCall(t, "t1")
		if _, err := a.member.DecideCallApproval(ctx, decideCall(rec.ID, approveCall, "")); status.Code(err) != codes.PermissionDenied {
			t.Fatalf("member approval: %v", err)
		}
	})
	t.Run("ApprovingRunsTheCallAndAReplayIsAborted", func(t *testing.T) {
		rec := a.waitingCall(t, "t1")
		got, err := a.admin.DecideCallApproval(ctx, decideCall(rec.ID, approveCall, ""))
		if err != nil || got.GetCallApproval().GetStatus() != operatorv1.CallApprovalStatus_CALL_APPROVAL_STATUS_APPROVED ||
			got.GetCallApproval().GetDecidedBy() != "ada" {
			t.Fatalf("approve: %v, %v", got, err)
		}
		if _, err := a.admin.DecideCallApproval(ctx, decideCall(rec.ID, denyCall, "")); status.Code(err) != codes.Aborted {
			t.Fatalf("replay: %v, want Aborted", err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			c, err := a.member.GetCallApproval(ctx, &operatorv1.GetCallApprovalRequest{CallApprovalId: uint64(rec.ID)})
			if err != nil {
				t.Fatal(err)
			}
			if c.GetCallApproval().GetStatus() == operatorv1.CallApprovalStatus_CALL_APPROVAL_STATUS_DONE {
				if c.GetCallApproval().GetResultStatus() != operatorv1.CallStatus_CALL_STATUS_COMPLETED || c.GetCallApproval().GetOutcomeJson() != `{"x":1}` {
					t.Fatalf("done: %v", c)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("not done: %v", c)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	t.Run("AMemberDeniesWithANote", func(t *testing.T) {
		rec := a.waitingCall(t, "t1")
		got, err := a.member.DecideCallApproval(ctx, decideCall(rec.ID, denyCall, "  not now "))
		if err != nil || got.GetCallApproval().GetStatus() != operatorv1.CallApprovalStatus_CALL_APPROVAL_STATUS_DENIED ||
			got.GetCallApproval().GetNote() != "not now" {
			t.Fatalf("deny: %v, %v", got, err)
		}
	})
	t.Run("AnExpiredCallIsListedAndTakesNoDecision", func(t *testing.T) {
		rec := a.waitingCall(t, "expiring")
		if _, err := a.st.ExpireCallApproval(ctx, rec.ID); err != nil {
			t.Fatal(err)
		}
		list, err := a.member.ListCallApprovals(ctx, &operatorv1.ListCallApprovalsRequest{Status: operatorv1.CallApprovalStatus_CALL_APPROVAL_STATUS_EXPIRED})
		if err != nil || len(list.GetCallApprovals()) != 1 || list.GetCallApprovals()[0].GetId() != uint64(rec.ID) ||
			list.GetCallApprovals()[0].GetDecidedBy() != "" || list.GetCallApprovals()[0].GetDecidedAt() != nil ||
			list.GetCallApprovals()[0].GetSettledAt() == nil {
			t.Fatalf("expired list: %v, %v", list, err)
		}
		_, err = a.member.DecideCallApproval(ctx, decideCall(rec.ID, denyCall, ""))
		if status.Code(err) != codes.Aborted || status.Convert(err).Message() != fmt.Sprintf("call approval %d expired: nobody decided it in time", rec.ID) {
			t.Fatalf("denial of an expired call: %v", err)
		}
	})
	t.Run("BadRequestsAreRefused", func(t *testing.T) {
		rec := a.waitingCall(t, "t1")
		for name, tc := range map[string]struct {
			req  *operatorv1.DecideCallApprovalRequest
			code codes.Code
		}{
			"NoDecision":        {decideCall(rec.ID, 0, ""), codes.InvalidArgument},
			"ApprovalWithANote": {decideCall(rec.ID, approveCall, "x"), codes.InvalidArgument},
			"UnknownID":         {decideCall(rec.ID+1000, denyCall, ""), codes.NotFound},
			"ZeroID":            {decideCall(0, denyCall, ""), codes.NotFound},
		} {
			if _, err := a.admin.DecideCallApproval(ctx, tc.req); status.Code(err) != tc.code {
				t.Errorf("%s: %v, want %v", name, err, tc.code)
			}
		}
		for _, d := range []operatorv1.Decision{operatorv1.Decision_DECISION_COMMENT, operatorv1.Decision_DECISION_ALLOW_ONCE,
			operatorv1.Decision_DECISION_ALLOW_THREAD, operatorv1.Decision_DECISION_ALLOW_CONVERSATION} {
			_, err := a.admin.DecideCallApproval(ctx, decideCall(rec.ID, d, ""))
			wantRefusedNaming(t, d.String(), err, "a call approval takes DECISION_APPROVE or DECISION_DENY, not "+d.String())
		}
	})
}
