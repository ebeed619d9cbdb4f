package response

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/events"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/memory"
	"github.com/turncli/turncli/primary/toolkits/testtk"
)

// confirmEnv is a Manager with the test toolkit and call approvals over a real store.
type confirmEnv struct {
	m      *Manager
	st     *memory.Store
	bus    *events.Bus
	marker string
}

// newConfirmEnv makes a confirmEnv whose calls leave their marker in dir (a temporary one
// when empty), over the in-memory store; wrap, when given, is the store the manager sees in
// place of the real one.
func newConfirmEnv(t *testing.T, dir string, wrap ...func(CallApprovalStore) CallApprovalStore) *confirmEnv {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	st := memory.Open(memory.Options{})
	reg := catalog.NewRegistry()
	if err := reg.Register(context.Background(), testtk.New()); err != nil {
		t.Fatal(err)
	}
	e := &confirmEnv{st: st, bus: events.New(), marker: filepath.Join(dir, "runs")}
	var seen CallApprovalStore = st
	for _, w := range wrap {
		seen = w(seen)
	}
	e.m = NewManager(Config{Registry: reg, CallApprovals: &CallApprovalConfig{Store: seen, Events: e.bus}})
	t.Cleanup(func() {
		e.m.CloseAll()
		st.Close()
	})
	return e
}

// waitEvent waits for an event of kind on feed and returns its record id.
func waitEvent(t *testing.T, feed <-chan events.Event, kind string) int64 {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev := <-feed:
			if ev.Kind == kind {
				id, _ := strconv.ParseInt(strings.TrimPrefix(ev.Subject, "call_approval/"), 10, 64)
				return id
			}
		case <-timeout:
			t.Fatalf("no %s event", kind)
		}
	}
}

// submit opens a minimal-mode response and a window with a checkpoint, and calls
// test.confirm_echo in it.
func (e *confirmEnv) submit(t *testing.T, spec Spec) (*Response, *Window, uuid.UUID, string) {
	t.Helper()
	spec.ShellMode = ShellModeMinimal
	r, err := e.m.Open(spec)
	if err != nil {
		t.Fatal(err)
	}
	w, err := r.OpenWindow("bash-1", WithCheckpoint([]byte("cp\x001")))
	if err != nil {
		t.Fatal(err)
	}
	args := `{"marker":` + strconv.Quote(e.marker) + `,"x":1}`
	id := uuid.New()
	if _, err := r.Call(t.Context(), w.token, CallRequest{ID: id, Toolkit: testtk.Name, Function: "confirm_echo", Arguments: []byte(args)}); err != nil {
		t.Fatal(err)
	}
	return r, w, id, args
}

func (e *confirmEnv) runs(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(e.marker)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

func (e *confirmEnv) record(t *testing.T, id int64) store.CallApproval {
	t.Helper()
	rec, err := e.st.CallApproval(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func receiptOf(t *testing.T, r *Response, id uuid.UUID, wait time.Duration) string {
	t.Helper()
	body, err := r.GetCall(context.Background(), id, wait)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// holdingSaves holds each SaveCallApproval, after it saved, until release is closed.
type holdingSaves struct {
	CallApprovalStore
	saved, release chan struct{}
}

func (h *holdingSaves) SaveCallApproval(ctx context.Context, c store.NewCallApproval) (store.CallApproval, error) {
	rec, err := h.CallApprovalStore.SaveCallApproval(ctx, c)
	h.saved <- struct{}{}
	<-h.release
	return rec, err
}

// admin is the operator who approves the calls of these tests.
var admin = store.Operator{Name: "admin", Role: store.RoleAdmin}

var conversation = Spec{Agent: "coder", Requester: "@alice", Channel: "!room", Thread: "$t1"}

func TestConfirmationWhileTheResponseLives(t *testing.T) {
	ctx := context.Background()
	t.Run("TheExactCallIsSavedWaitingBeforeItRunsThenRunsOnceWhenApproved", func(t *testing.T) {
		e := newConfirmEnv(t, "")
		feed, stop := e.bus.Subscribe(0)
		defer stop()
		r, w, id, args := e.submit(t, conversation)
		recID := waitEvent(t, feed, KindCallApprovalCreated)
		rec := e.record(t, recID)
		if rec.Status != store.CallApprovalWaiting || rec.CallID != id.String() || rec.Arguments != args || rec.BashCallID != "bash-1" ||
			rec.ResponseID != r.ID() || rec.Agent != "coder" || rec.Requester != "@alice" || rec.Channel != "!room" ||
			rec.Thread != "$t1" || string(rec.Checkpoint) != "cp\x001" {
			t.Fatalf("saved %+v", rec)
		}
		if got := receiptOf(t, r, id, 0); !strings.Contains(got, `"status":"waiting"`) {
			t.Fatalf("receipt while waiting: %s", got)
		}
		if e.runs(t) != 0 {
			t.Fatal("the call ran before it was approved")
		}
		if _, err := e.m.CallApprovals().Approve(ctx, recID, admin); err != nil {
			t.Fatal(err)
		}
		if got := receiptOf(t, r, id, time.Minute); !strings.Contains(got, `"outcome":`+args) || !strings.Contains(got, `"status":"completed"`) {
			t.Fatalf("receipt after approval: %s", got)
		}
		if views := r.DrainWindow(w); len(views) != 1 || views[0].Status != Completed {
			t.Fatalf("window receipts %+v", views)
		}
		if rec := e.record(t, recID); rec.Status != store.CallApprovalDone || rec.Result.Status != "completed" || rec.Result.Outcome != args {
			t.Fatalf("record after the call: %+v", rec)
		}
		if e.runs(t) != 1 {
			t.Fatalf("ran %d times", e.runs(t))
		}
		if cs, _ := e.st.PendingContinuations(ctx, 0, 10); len(cs) != 0 {
			t.Fatalf("a live call enqueued continuations: %+v", cs)
		}
		if _, err := e.m.CallApprovals().Approve(ctx, recID, admin); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("replayed approval: %v, want ErrConflict", err)
		}
	})
	t.Run("TheReceiptWaitsOnceTheApprovalCanBeSeen", func(t *testing.T) {
		held := &holdingSaves{saved: make(chan struct{}), release: make(chan struct{})}
		e := newConfirmEnv(t, "", func(st CallApprovalStore) CallApprovalStore { held.CallApprovalStore = st; return held })
		r, _, id, _ := e.submit(t, conversation)
		<-held.saved // saved, so operators can decide it; its Save has not returned yet
		got := receiptOf(t, r, id, 0)
		close(held.release)
		if !strings.Contains(got, `"status":"waiting"`) {
			t.Fatalf("receipt once the approval is saved: %s", got)
		}
	})
	for _, tc := range []struct{ name, by, note, want string }{
		{"TheRequestersDenialWithoutANoteFailsNotApprovedByRequester", "@alice", "",
			`{"decided_by":"@alice","error":"Not approved by requester","reason":"approval_denied"}`},
		{"AnotherOperatorsDenialWithoutANoteSaysSoWithoutTheirName", "admin", "",
			`{"decided_by":"admin","error":"Not approved by an operator, not by the requester","reason":"approval_denied"}`},
		{"DeniedWithANoteFailsWithTheNote", "bob", "too risky",
			`{"decided_by":"bob","error":"too risky","reason":"approval_denied"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newConfirmEnv(t, "")
			feed, stop := e.bus.Subscribe(0)
			defer stop()
			r, _, id, _ := e.submit(t, conversation)
			recID := waitEvent(t, feed, KindCallApprovalCreated)
			if _, err := e.m.CallApprovals().Deny(ctx, recID, tc.by, tc.note); err != nil {
				t.Fatal(err)
			}
			got := receiptOf(t, r, id, time.Minute)
			if !strings.Contains(got, `"outcome":`+tc.want+`,`) || !strings.Contains(got, `"status":"failed"`) {
				t.Fatalf("receipt %s, want outcome %s", got, tc.want)
			}
			if e.runs(t) != 0 {
				t.Fatal("a denied call ran")
			}
			if cs, _ := e.st.PendingContinuations(ctx, 0, 10); len(cs) != 0 {
				t.Fatalf("a live denial enqueued continuations: %+v", cs)
			}
		})
	}
	t.Run("WithoutCallApprovalsTheCallFailsWithoutRunning", func(t *testing.T) {
		m, _ := inspectEnv(t)
		r := openResponse(t, m, Spec{Agent: "coder", ShellMode: ShellModeMinimal})
		w, err := r.OpenWindow("bash-1")
		if err != nil {
			t.Fatal(err)
		}
		id := call(t, r, w, "confirm_echo", `{}`)
		if got := receiptOf(t, r, id, time.Minute); !strings.Contains(got, noConfirmation) {
			t.Fatalf("receipt %s", got)
		}
	})
	t.Run("AnOverLargeCheckpointIsRefused", func(t *testing.T) {
		m, _ := inspectEnv(t)
		r := openResponse(t, m, Spec{Agent: "coder"})
		if _, err := r.OpenWindow("bash-1", WithCheckpoint(make([]byte, MaxCheckpointBytes+1))); err == nil {
			t.Fatal("accepted")
		}
	})
}

func TestConfirmationAfterTheResponseEnded(t *testing.T) {
	ctx := context.Background()
	t.Run("ApprovalRunsOnlyTheExactCallOnceAndAContinuationCarriesTheCheckpoint", func(t *testing.T) {
		e := newConfirmEnv(t, "")
		feed, stop := e.bus.Subscribe(0)
		defer stop()
		r, _, id, args := e.submit(t, conversation)
		recID := waitEvent(t, feed, KindCallApprovalCreated)
		r.Close()
		if rec := e.record(t, recID); rec.Status != store.CallApprovalWaiting {
			t.Fatalf("after the response closed: %s", rec.Status)
		}
		if _, err := e.m.CallApprovals().Approve(ctx, recID, admin); err != nil {
			t.Fatal(err)
		}
		waitEvent(t, feed, KindCallApprovalFinished)
		rec := e.record(t, recID)
		if rec.Status != store.CallApprovalDone || rec.Result.Status != "completed" || rec.Result.Outcome != args {
			t.Fatalf("record %+v", rec)
		}
		if e.runs(t) != 1 {
			t.Fatalf("ran %d times", e.runs(t))
		}
		cs, err := e.st.PendingContinuations(ctx, 0, 10)
		if err != nil || len(cs) != 1 {
			t.Fatalf("continuations %+v, %v", cs, err)
		}
		c := cs[0]
		if !strings.HasPrefix(c.IdempotencyKey, "call:") || !strings.HasSuffix(c.IdempotencyKey, "/"+id.String()) || c.Channel != "!room" || c.Thread != "$t1" || string(c.Checkpoint) != "cp\x001" {
			t.Fatalf("continuation %+v", c)
		}
		for _, want := range []string{"test.confirm_echo", id.String(), args, "completed", "interrupted and not resumed", "bash-1"} {
			if !strings.Contains(c.Text, want) {
				t.Errorf("continuation text lacks %q: %s", want, c.Text)
			}
		}
		if n := e.m.Len(); n != 0 {
			t.Fatalf("%d responses left open", n)
		}
	})
	t.Run("AnotherOperatorsDenialIsToldWithoutBlamingTheRequester", func(t *testing.T) {
		e := newConfirmEnv(t, "")
		feed, stop := e.bus.Subscribe(0)
		defer stop()
		r, _, _, _ := e.submit(t, conversation)
		recID := waitEvent(t, feed, KindCallApprovalCreated)
		r.Close()
		if _, err := e.m.CallApprovals().Deny(ctx, recID, "admin", ""); err != nil {
			t.Fatal(err)
		}
		cs, err := e.st.PendingContinuations(ctx, 0, 10)
		if err != nil || len(cs) != 1 || !strings.Contains(cs[0].Text, "not approved and did not run: Not approved by an operator, not by the requester.") {
			t.Fatalf("continuations %+v, %v", cs, err)
		}
	})
	t.Run("DenialIsToldThroughAContinuation", func(t *testing.T) {
		e := newConfirmEnv(t, "")
		feed, stop := e.bus.Subscribe(0)
		defer stop()
		r, _, id, _ := e.submit(t, conversation)
		recID := waitEvent(t, feed, KindCallApprovalCreated)
		r.Close()
		if _, err := e.m.CallApprovals().Deny(ctx, recID, "bob", "no"); err != nil {
			t.Fatal(err)
		}
		cs, err := e.st.PendingContinuations(ctx, 0, 10)
		if err != nil || len(cs) != 1 || !strings.HasSuffix(cs[0].IdempotencyKey, "/"+id.String()) || !strings.Contains(cs[0].Text, "not approved and did not run: no.") {
			t.Fatalf("continuations %+v, %v", cs, err)
		}
		if e.runs(t) != 0 {
			t.Fatal("a denied call ran")
		}
	})
}

func TestConfirmationAtBoot(t *testing.T) {
	ctx := context.Background()
	saved := func(t *testing.T, e *confirmEnv) store.CallApproval {
		t.Helper()
		rec, err := e.st.SaveCallApproval(ctx, store.NewCallApproval{
			CallID: uuid.NewString(), Toolkit: testtk.Name, Function: "confirm_echo",
			Arguments: `{"marker":` + strconv.Quote(e.marker) + `}`, BashCallID: "bash-9", ResponseID: "gone",
			Agent: "coder", Channel: "!room", Checkpoint: []byte("cp9"),
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.st.ApproveCallApproval(ctx, rec.ID, "admin"); err != nil {
			t.Fatal(err)
		}
		return rec
	}
	t.Run("AClaimedCallIsInterruptedNeverRerun", func(t *testing.T) {
		e := newConfirmEnv(t, "")
		rec := saved(t, e)
		if _, err := e.st.ClaimCallApproval(ctx, rec.ID); err != nil {
			t.Fatal(err)
		}
		if err := e.m.RecoverCallApprovals(ctx); err != nil {
			t.Fatal(err)
		}
		got := e.record(t, rec.ID)
		if got.Status != store.CallApprovalInterrupted || got.Result.Status != "cancelled" || !strings.Contains(got.Result.Outcome, "interrupted") {
			t.Fatalf("record %+v", got)
		}
		cs, _ := e.st.PendingContinuations(ctx, 0, 10)
		if len(cs) != 1 || cs[0].IdempotencyKey != CallContinuationKey(rec) || string(cs[0].Checkpoint) != "cp9" ||
			!strings.Contains(cs[0].Text, "not run again") {
			t.Fatalf("continuations %+v", cs)
		}
		if err := e.m.RecoverCallApprovals(ctx); err != nil { // a second boot changes nothing
			t.Fatal(err)
		}
		if e.runs(t) != 0 {
			t.Fatal("an interrupted call ran again")
		}
	})
	t.Run("AnApprovedCallThatNeverStartedRunsOnce", func(t *testing.T) {
		e := newConfirmEnv(t, "")
		feed, stop := e.bus.Subscribe(0)
		defer stop()
		rec := saved(t, e)
		if err := e.m.RecoverCallApprovals(ctx); err != nil {
			t.Fatal(err)
		}
		waitEvent(t, feed, KindCallApprovalFinished)
		if got := e.record(t, rec.ID); got.Status != store.CallApprovalDone {
			t.Fatalf("record %+v", got)
		}
		if e.runs(t) != 1 {
			t.Fatalf("ran %d times", e.runs(t))
		}
	})
	t.Run("WaitingCallsStayWaiting", func(t *testing.T) {
		e := newConfirmEnv(t, "")
		rec, err := e.st.SaveCallApproval(ctx, store.NewCallApproval{CallID: uuid.NewString(), Toolkit: testtk.Name,
			Function: "confirm_echo", Arguments: `{}`, ResponseID: "gone", Agent: "coder", Channel: "!room"})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.m.RecoverCallApprovals(ctx); err != nil {
			t.Fatal(err)
		}
		if got := e.record(t, rec.ID); got.Status != store.CallApprovalWaiting {
			t.Fatalf("record %+v", got)
		}
	})
}

func TestCallContinuationKeysOfTheSameCallIDInTwoResponsesDiffer(t *testing.T) {
	a := CallContinuationKey(store.CallApproval{NewCallApproval: store.NewCallApproval{ResponseID: "r1", CallID: "c"}})
	b := CallContinuationKey(store.CallApproval{NewCallApproval: store.NewCallApproval{ResponseID: "r2", CallID: "c"}})
	if a == b || a != "call:r1/c" {
		t.Fatalf("keys %q and %q", a, b)
	}
}
