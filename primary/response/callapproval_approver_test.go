package response

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/store"
)

// TestOnlyAnAdminApprovesACall: the engine itself refuses a person who is not an admin, so
// every caller (the operator API, a relay from chat) gets the rule; the refused call keeps
// waiting and an admin's approval then runs it.
func TestOnlyAnAdminApprovesACall(t *testing.T) {
	ctx := context.Background()
	e := newConfirmEnv(t, "")
	feed, stop := e.bus.Subscribe(0)
	defer stop()
	r, _, id, _ := e.submit(t, conversation)
	recID := waitEvent(t, feed, KindCallApprovalCreated)

	for _, by := range []store.Operator{
		{Name: "mia", Role: store.RoleMember},
		{Name: "@alice", Role: ""}, // the requester, who is no operator
	} {
		_, err := e.m.CallApprovals().Approve(ctx, recID, by)
		want := `only an admin can approve a call; operator "` + by.Name + `" is a ` + string(by.Role)
		if !fault.Is(err, fault.PermissionDenied) || err.Error() != want {
			t.Fatalf("approved by %+v: %v, want PERMISSION_DENIED %q", by, err, want)
		}
		if rec := e.record(t, recID); rec.Status != store.CallApprovalWaiting || rec.DecidedBy != "" {
			t.Fatalf("after %s's refused approval: %+v, want still waiting", by.Name, rec)
		}
	}
	if e.runs(t) != 0 {
		t.Fatal("a refused approval ran the call")
	}
	if err := CheckCallApprover(admin); err != nil {
		t.Fatalf("an admin: %v", err)
	}
	rec, err := e.m.CallApprovals().Approve(ctx, recID, admin)
	if err != nil || rec.DecidedBy != "admin" {
		t.Fatalf("the admin's approval: %+v, %v", rec, err)
	}
	if got := receiptOf(t, r, id, time.Minute); !strings.Contains(got, `"status":"completed"`) || e.runs(t) != 1 {
		t.Fatalf("receipt after the admin's approval: %s, ran %d times", got, e.runs(t))
	}
}
