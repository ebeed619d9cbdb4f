package drivertest

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/turncli/turncli/primary/store"
)

func newCall(callID string) store.NewCallApproval {
	return store.NewCallApproval{
		CallID: callID, Toolkit: "test", Function: "confirm_echo", Arguments: `{"x":1}`, BashCallID: "bash-1",
		ResponseID: "resp-1", Agent: "coder", Requester: "@alice", Channel: "room", Thread: "t1", WorkerKey: "key-a",
		Checkpoint: []byte{0, 1, 2, 0xff},
	}
}

const (
	callA = "6f1c1a52-2f4e-4a43-9d43-111111111111"
	callB = "6f1c1a52-2f4e-4a43-9d43-222222222222"
)

// callAuditOf returns a call approval's audit entries as "action actor", oldest first.
func callAuditOf(t *testing.T, s store.Store, id int64) []string {
	t.Helper()
	es, err := s.ListAudit(context.Background(), store.AuditFilter{Subject: store.CallApprovalSubject(id)})
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for i := len(es) - 1; i >= 0; i-- {
		out = append(out, es[i].Action+" "+es[i].Actor)
	}
	return out
}

func saveCall(t *testing.T, s store.Store, c store.NewCallApproval) store.CallApproval {
	t.Helper()
	rec, err := s.SaveCallApproval(context.Background(), c)
	if err != nil {
		t.Fatalf("save %s: %v", c.CallID, err)
	}
	return rec
}

func (cf conformance) testSaveCallApproval(t *testing.T) {
	ctx := context.Background()
	t.Run("SavedWaitingWithEveryFieldAndItsAuditEntry", func(t *testing.T) {
		clk := &clock{t: t0}
		s := cf.open(t, nil, clk)
		rec := saveCall(t, s, newCall(callA))
		got, err := s.CallApproval(ctx, rec.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := store.CallApproval{ID: rec.ID, NewCallApproval: newCall(callA), Status: store.CallApprovalWaiting, CreatedAt: t0}
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(rec, want) {
			t.Fatalf("got %+v\nsaved %+v\nwant %+v", got, rec, want)
		}
		if a := callAuditOf(t, s, rec.ID); !reflect.DeepEqual(a, []string{"call_approval.request primary"}) {
			t.Fatalf("audit %v", a)
		}
	})
	t.Run("TheSameCallOfTheSameResponseIsAConflict", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		saveCall(t, s, newCall(callA))
		if _, err := s.SaveCallApproval(ctx, newCall(callA)); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("second save: %v, want ErrConflict", err)
		}
		other := newCall(callA)
		other.ResponseID = "resp-2"
		saveCall(t, s, other) // call ids are unique per response only
	})
	bad := map[string]func(*store.NewCallApproval){
		"CallIDNotCanonical":   func(c *store.NewCallApproval) { c.CallID = strings.ToUpper(callA) },
		"NoToolkit":            func(c *store.NewCallApproval) { c.Toolkit = "" },
		"NoFunction":           func(c *store.NewCallApproval) { c.Function = "" },
		"NoResponse":           func(c *store.NewCallApproval) { c.ResponseID = "" },
		"NoAgent":              func(c *store.NewCallApproval) { c.Agent = "" },
		"ArgumentsNotAnObject": func(c *store.NewCallApproval) { c.Arguments = `[1]` },
		"ArgumentsNotJSON":     func(c *store.NewCallApproval) { c.Arguments = `{` },
		"CheckpointTooLarge":   func(c *store.NewCallApproval) { c.Checkpoint = make([]byte, store.MaxCheckpoint+1) },
	}
	for name, change := range bad {
		t.Run(name+"IsInvalid", func(t *testing.T) {
			s := cf.open(t, nil, nil)
			c := newCall(callA)
			change(&c)
			if _, err := s.SaveCallApproval(ctx, c); !errors.Is(err, store.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
		})
	}
}

func (cf conformance) testCallApprovalTransitions(t *testing.T) {
	ctx := context.Background()
	result := store.CallResult{Status: "completed", Outcome: `{"x":1}`}
	tell := store.NewContinuation{IdempotencyKey: "call:" + callA, Channel: "room", Thread: "t1", Text: "ran", Checkpoint: []byte{9, 0, 9}}

	t.Run("ApprovedClaimedDoneWithTheContinuationInTheSameTransaction", func(t *testing.T) {
		s := cf.open(t, nil, &clock{t: t0})
		rec := saveCall(t, s, newCall(callA))
		approved, err := s.ApproveCallApproval(ctx, rec.ID, "admin")
		if err != nil || approved.Status != store.CallApprovalApproved || approved.DecidedBy != "admin" || !approved.DecidedAt.Equal(t0) {
			t.Fatalf("approve: %+v, %v", approved, err)
		}
		claimed, err := s.ClaimCallApproval(ctx, rec.ID)
		if err != nil || claimed.Status != store.CallApprovalClaimed || claimed.ClaimedAt.IsZero() {
			t.Fatalf("claim: %+v, %v", claimed, err)
		}
		if _, err := s.ClaimCallApproval(ctx, rec.ID); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("second claim: %v, want ErrConflict", err)
		}
		done, err := s.FinishCallApproval(ctx, rec.ID, store.CallApprovalDone, result, tell)
		if err != nil || done.Status != store.CallApprovalDone || done.Result != result || done.SettledAt.IsZero() {
			t.Fatalf("finish: %+v, %v", done, err)
		}
		cs, err := s.PendingContinuations(ctx, 0, 10)
		if err != nil || len(cs) != 1 || cs[0].IdempotencyKey != tell.IdempotencyKey || string(cs[0].Checkpoint) != string(tell.Checkpoint) {
			t.Fatalf("continuations %+v, %v", cs, err)
		}
		want := []string{"call_approval.request primary", "call_approval.approve admin", "call_approval.claim primary", "call_approval.finish primary"}
		if a := callAuditOf(t, s, rec.ID); !reflect.DeepEqual(a, want) {
			t.Fatalf("audit %v, want %v", a, want)
		}
	})
	t.Run("DeniedWithNoteIsFinal", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		rec := saveCall(t, s, newCall(callA))
		denied, err := s.DenyCallApproval(ctx, rec.ID, "bob", "not today", tell)
		if err != nil || denied.Status != store.CallApprovalDenied || denied.Note != "not today" || denied.SettledAt.IsZero() {
			t.Fatalf("deny: %+v, %v", denied, err)
		}
		if keys := pendingKeys(t, s, 0, 10); !reflect.DeepEqual(keys, []string{tell.IdempotencyKey}) {
			t.Fatalf("continuations %v", keys)
		}
		for name, f := range map[string]func() error{
			"approve": func() error { _, err := s.ApproveCallApproval(ctx, rec.ID, "admin"); return err },
			"deny":    func() error { _, err := s.DenyCallApproval(ctx, rec.ID, "admin", ""); return err },
			"claim":   func() error { _, err := s.ClaimCallApproval(ctx, rec.ID); return err },
			"finish":  func() error { _, err := s.FinishCallApproval(ctx, rec.ID, store.CallApprovalDone, result); return err },
		} {
			if err := f(); !errors.Is(err, store.ErrConflict) {
				t.Errorf("%s after deny: %v, want ErrConflict", name, err)
			}
		}
	})
	t.Run("ALostRaceWritesNeitherAuditNorContinuation", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		rec := saveCall(t, s, newCall(callA))
		if _, err := s.FinishCallApproval(ctx, rec.ID, store.CallApprovalInterrupted, result, tell); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("finish of a waiting call: %v, want ErrConflict", err)
		}
		if _, err := s.ClaimCallApproval(ctx, rec.ID); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("claim of a waiting call: %v, want ErrConflict", err)
		}
		if keys := pendingKeys(t, s, 0, 10); len(keys) != 0 {
			t.Fatalf("continuations %v", keys)
		}
		if a := callAuditOf(t, s, rec.ID); len(a) != 1 {
			t.Fatalf("audit %v", a)
		}
	})
	t.Run("ConcurrentApprovalsHaveOneWinner", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		rec := saveCall(t, s, newCall(callA))
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins := 0
		for range 8 {
			wg.Go(func() {
				if _, err := s.ApproveCallApproval(ctx, rec.ID, "admin"); err == nil {
					mu.Lock()
					wins++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if wins != 1 {
			t.Fatalf("%d approvals won", wins)
		}
	})
	t.Run("BadArgumentsAreInvalidOrNotFound", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		rec := saveCall(t, s, newCall(callA))
		if _, err := s.ApproveCallApproval(ctx, rec.ID, ""); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("approve without actor: %v", err)
		}
		if _, err := s.DenyCallApproval(ctx, rec.ID, "bob", strings.Repeat("x", store.MaxApprovalComment+1)); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("over-long note: %v", err)
		}
		if _, err := s.FinishCallApproval(ctx, rec.ID, store.CallApprovalDenied, result); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("finish as denied: %v", err)
		}
		if _, err := s.FinishCallApproval(ctx, rec.ID, store.CallApprovalDone, store.CallResult{}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("finish without a status: %v", err)
		}
		if _, err := s.ApproveCallApproval(ctx, rec.ID+100, "admin"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("approve unknown: %v", err)
		}
		if _, err := s.CallApproval(ctx, rec.ID+100); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("read unknown: %v", err)
		}
	})
}

func (cf conformance) testListCallApprovals(t *testing.T) {
	ctx := context.Background()
	s := cf.open(t, nil, nil)
	a := saveCall(t, s, newCall(callA))
	other := newCall(callB)
	other.Thread, other.ResponseID = "t2", "resp-2"
	b := saveCall(t, s, other)
	if _, err := s.ApproveCallApproval(ctx, b.ID, "admin"); err != nil {
		t.Fatal(err)
	}
	ids := func(f store.CallApprovalFilter) []int64 {
		t.Helper()
		list, err := s.ListCallApprovals(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		out := []int64{}
		for _, c := range list {
			out = append(out, c.ID)
		}
		return out
	}
	for name, tc := range map[string]struct {
		f    store.CallApprovalFilter
		want []int64
	}{
		"EverythingNewestFirst": {store.CallApprovalFilter{}, []int64{b.ID, a.ID}},
		"ByStatus":              {store.CallApprovalFilter{Status: store.CallApprovalWaiting}, []int64{a.ID}},
		"ByConversation":        {store.CallApprovalFilter{Channel: "room", Thread: "t2"}, []int64{b.ID}},
		"ByResponse":            {store.CallApprovalFilter{ResponseID: "resp-1"}, []int64{a.ID}},
		"Limited":               {store.CallApprovalFilter{Limit: 1}, []int64{b.ID}},
	} {
		t.Run(name, func(t *testing.T) {
			if got := ids(tc.f); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	if _, err := s.ListCallApprovals(ctx, store.CallApprovalFilter{Status: "nope"}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("unknown status: %v", err)
	}
}

func (cf conformance) testContinuationCheckpointRoundTrips(t *testing.T) {
	ctx := context.Background()
	s := cf.open(t, nil, nil)
	for key, cp := range map[string][]byte{"with": {0, 1, 0xfe}, "without": nil} {
		if _, _, err := s.EnqueueContinuation(ctx, store.NewContinuation{IdempotencyKey: key, Channel: "room", Text: "x", Checkpoint: cp}); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := s.PendingContinuations(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		want := map[string]string{"with": "\x00\x01\xfe", "without": ""}[c.IdempotencyKey]
		if string(c.Checkpoint) != want {
			t.Errorf("%s: checkpoint %q, want %q", c.IdempotencyKey, c.Checkpoint, want)
		}
	}
	if _, _, err := s.EnqueueContinuation(ctx, store.NewContinuation{IdempotencyKey: "big", Channel: "room", Text: "x",
		Checkpoint: make([]byte, store.MaxCheckpoint+1)}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("over-large checkpoint: %v", err)
	}
}
