package response

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/clock/clocktest"
	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/events"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/memory"
	"github.com/turncli/turncli/primary/toolkits/testtk"
)

// testExpiry is the call approval expiry of these tests.
const testExpiry = time.Minute

// newExpiryEnv is a confirmEnv whose manager and store tell time by clk, with calls expiring
// after testExpiry.
func newExpiryEnv(t *testing.T, clk *clocktest.Fake) *confirmEnv {
	t.Helper()
	st := memory.Open(memory.Options{Now: clk.Now})
	reg := catalog.NewRegistry()
	if err := reg.Register(context.Background(), testtk.New()); err != nil {
		t.Fatal(err)
	}
	e := &confirmEnv{st: st, bus: events.New(), marker: t.TempDir() + "/runs"}
	e.m = NewManager(Config{Registry: reg, Clock: clk, Settings: Settings{CallApprovalExpiry: testExpiry},
		CallApprovals: &CallApprovalConfig{Store: st, Events: e.bus}})
	t.Cleanup(func() {
		e.m.CloseAll()
		st.Close()
	})
	return e
}

const expiredOutcome = `{"decided_by":null,"error":"Approval expired: nobody decided within 1m; the call did not run","reason":"approval_expired"}`

func TestConfirmationExpires(t *testing.T) {
	ctx := context.Background()
	t.Run("AWaitingCallExpiresAtTheBoundAndFailsWithTheReason", func(t *testing.T) {
		clk := clocktest.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		e := newExpiryEnv(t, clk)
		feed, stop := e.bus.Subscribe(0)
		defer stop()
		r, _, id, _ := e.submit(t, conversation)
		recID := waitEvent(t, feed, KindCallApprovalCreated)
		clk.WaitForPending(1) // the call's expiry timer
		clk.Advance(testExpiry - time.Nanosecond)
		if got := receiptOf(t, r, id, 0); !strings.Contains(got, `"status":"waiting"`) {
			t.Fatalf("receipt just before the bound: %s", got)
		}
		clk.Advance(time.Nanosecond)
		if got := waitEvent(t, feed, KindCallApprovalExpired); got != recID {
			t.Fatalf("expired record %d, want %d", got, recID)
		}
		got := receiptOf(t, r, id, time.Minute)
		if !strings.Contains(got, `"outcome":`+expiredOutcome+`,`) || !strings.Contains(got, `"status":"failed"`) {
			t.Fatalf("receipt %s, want outcome %s", got, expiredOutcome)
		}
		if rec := e.record(t, recID); rec.Status != store.CallApprovalExpired || rec.DecidedBy != "" {
			t.Fatalf("record %+v", rec)
		}
		if _, err := e.m.CallApprovals().Deny(ctx, recID, "bob", ""); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("denial after the expiry: %v, want ErrConflict", err)
		}
		if cs, _ := e.st.PendingContinuations(ctx, 0, 10); len(cs) != 0 {
			t.Fatalf("a live expiry enqueued continuations: %+v", cs)
		}
		if e.runs(t) != 0 {
			t.Fatal("an expired call ran")
		}
	})
	t.Run("ADecisionBeforeTheBoundStands", func(t *testing.T) {
		clk := clocktest.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		e := newExpiryEnv(t, clk)
		feed, stop := e.bus.Subscribe(0)
		defer stop()
		r, _, id, _ := e.submit(t, conversation)
		recID := waitEvent(t, feed, KindCallApprovalCreated)
		if _, err := e.m.CallApprovals().Deny(ctx, recID, "bob", "no"); err != nil {
			t.Fatal(err)
		}
		receiptOf(t, r, id, time.Minute)
		clk.Advance(testExpiry)
		if n, err := e.m.CallApprovals().ExpireOverdue(ctx); n != 0 || err != nil {
			t.Fatalf("sweep expired %d, %v", n, err)
		}
		if rec := e.record(t, recID); rec.Status != store.CallApprovalDenied {
			t.Fatalf("record %+v", rec)
		}
	})
	t.Run("TheSweepExpiresACallWhoseResponseEndedAndTellsTheConversation", func(t *testing.T) {
		clk := clocktest.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		e := newExpiryEnv(t, clk)
		feed, stop := e.bus.Subscribe(0)
		defer stop()
		r, _, id, _ := e.submit(t, conversation)
		recID := waitEvent(t, feed, KindCallApprovalCreated)
		r.Close()
		clk.Advance(testExpiry - time.Nanosecond)
		if n, err := e.m.CallApprovals().ExpireOverdue(ctx); n != 0 || err != nil {
			t.Fatalf("sweep before the bound expired %d, %v", n, err)
		}
		clk.Advance(time.Nanosecond)
		if n, err := e.m.CallApprovals().ExpireOverdue(ctx); n != 1 || err != nil {
			t.Fatalf("sweep at the bound expired %d, %v; want 1", n, err)
		}
		if rec := e.record(t, recID); rec.Status != store.CallApprovalExpired || !rec.SettledAt.Equal(clk.Now()) {
			t.Fatalf("record %+v", rec)
		}
		cs, err := e.st.PendingContinuations(ctx, 0, 10)
		if err != nil || len(cs) != 1 {
			t.Fatalf("continuations %+v, %v", cs, err)
		}
		if cs[0].IdempotencyKey != "call:"+r.ID()+"/"+id.String() || string(cs[0].Checkpoint) != "cp\x001" ||
			!strings.Contains(cs[0].Text, "was not decided in time and did not run: Approval expired: nobody decided within 1m; the call did not run.") {
			t.Fatalf("continuation %+v", cs[0])
		}
		if n, err := e.m.CallApprovals().ExpireOverdue(ctx); n != 0 || err != nil {
			t.Fatalf("a second sweep expired %d, %v", n, err)
		}
		if e.runs(t) != 0 {
			t.Fatal("an expired call ran")
		}
	})
	t.Run("TheSweepTakesEveryPage", func(t *testing.T) {
		clk := clocktest.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		e := newExpiryEnv(t, clk)
		total := sweepPage + 1
		for i := range total {
			if _, err := e.st.SaveCallApproval(ctx, store.NewCallApproval{CallID: "6f1c1a52-2f4e-4a43-9d43-" + strconv.FormatInt(100000000000+int64(i), 10),
				Toolkit: testtk.Name, Function: "confirm_echo", Arguments: `{}`, ResponseID: "gone", Agent: "coder"}); err != nil {
				t.Fatal(err)
			}
		}
		clk.Advance(testExpiry)
		if n, err := e.m.CallApprovals().ExpireOverdue(ctx); n != total || err != nil {
			t.Fatalf("sweep expired %d, %v; want %d", n, err, total)
		}
	})
}

func TestAReattachWithTheSameCallIDShowsTheSameWaitingCall(t *testing.T) {
	e := newConfirmEnv(t, "")
	feed, stop := e.bus.Subscribe(0)
	defer stop()
	r, w, id, args := e.submit(t, conversation)
	waitEvent(t, feed, KindCallApprovalCreated)
	body, err := r.Call(t.Context(), w.token, CallRequest{ID: id, Toolkit: testtk.Name, Function: "confirm_echo", Arguments: []byte(args)})
	if err != nil || !strings.Contains(string(body), `"status":"waiting"`) || !strings.Contains(string(body), id.String()) {
		t.Fatalf("second submission: %s, %v", body, err)
	}
	if list, err := e.st.ListCallApprovals(context.Background(), store.CallApprovalFilter{}); err != nil || len(list) != 1 {
		t.Fatalf("call approvals %+v, %v; want the one", list, err)
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		24 * time.Hour: "24h", 90 * time.Minute: "1h30m", time.Minute: "1m", 90 * time.Second: "1m30s",
		2 * time.Second: "2s", 1500 * time.Millisecond: "1.5s", time.Hour + time.Second: "1h0m1s",
	} {
		if got := shortDuration(d); got != want {
			t.Errorf("shortDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
