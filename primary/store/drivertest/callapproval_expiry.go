package drivertest

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// testCallApprovalExpiry checks waiting → expired: an end state without a decider, taken only
// from waiting, in one transaction with its audit entry, its card's closing and its
// continuation.
func (cf conformance) testCallApprovalExpiry(t *testing.T) {
	ctx := context.Background()
	tell := store.NewContinuation{IdempotencyKey: "call:" + callA, Channel: "room", Thread: "t1", Text: "expired", Checkpoint: []byte{7}}

	t.Run("AWaitingCallExpiresWithoutADeciderAndItsContinuation", func(t *testing.T) {
		clk := &clock{t: t0}
		s := cf.open(t, nil, clk)
		rec := saveCall(t, s, newCall(callA))
		at := t0.Add(24 * time.Hour)
		clk.Set(at)
		got, err := s.ExpireCallApproval(ctx, rec.ID, tell)
		if err != nil {
			t.Fatal(err)
		}
		want := rec
		want.Status, want.SettledAt = store.CallApprovalExpired, at
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("expired\n got %+v\nwant %+v", got, want)
		}
		if read, err := s.CallApproval(ctx, rec.ID); err != nil || !reflect.DeepEqual(read, want) {
			t.Fatalf("read back %+v, %v", read, err)
		}
		if keys := pendingKeys(t, s, 0, 10); !reflect.DeepEqual(keys, []string{tell.IdempotencyKey}) {
			t.Fatalf("continuations %v", keys)
		}
		if a, w := callAuditOf(t, s, rec.ID), []string{"call_approval.request primary", "call_approval.expire primary"}; !reflect.DeepEqual(a, w) {
			t.Fatalf("audit %v, want %v", a, w)
		}
		key := "call_approval/" + strconv.FormatInt(rec.ID, 10)
		feed := feedOf(t, s, store.ThreadEventFilter{})
		if w := []string{key + " opened room/t1", key + " closed room/t1"}; !reflect.DeepEqual(feed, w) {
			t.Fatalf("thread feed %q, want %q", feed, w)
		}
		list, err := s.ListCallApprovals(ctx, store.CallApprovalFilter{Status: store.CallApprovalExpired})
		if err != nil || len(list) != 1 || list[0].ID != rec.ID {
			t.Fatalf("listed expired: %+v, %v", list, err)
		}
		if !store.CallApprovalExpired.Final() || !store.CallApprovalExpired.Valid() {
			t.Fatal("expired is not a valid end state")
		}
	})
	t.Run("OnlyAWaitingCallExpires", func(t *testing.T) {
		for name, step := range map[string]func(*testing.T, store.Store, int64){
			"Approved": func(t *testing.T, s store.Store, id int64) { must(t)(s.ApproveCallApproval(ctx, id, "admin")) },
			"Claimed": func(t *testing.T, s store.Store, id int64) {
				must(t)(s.ApproveCallApproval(ctx, id, "admin"))
				must(t)(s.ClaimCallApproval(ctx, id))
			},
			"Denied":  func(t *testing.T, s store.Store, id int64) { must(t)(s.DenyCallApproval(ctx, id, "bob", "")) },
			"Expired": func(t *testing.T, s store.Store, id int64) { must(t)(s.ExpireCallApproval(ctx, id)) },
		} {
			t.Run(name+"IsAConflictAndChangesNothing", func(t *testing.T) {
				s := cf.open(t, nil, nil)
				rec := saveCall(t, s, newCall(callA))
				step(t, s, rec.ID)
				before, _ := s.CallApproval(ctx, rec.ID)
				audit := callAuditOf(t, s, rec.ID)
				if _, err := s.ExpireCallApproval(ctx, rec.ID, tell); !errors.Is(err, store.ErrConflict) {
					t.Fatalf("expire of a %s call: %v, want ErrConflict", before.Status, err)
				}
				if after, _ := s.CallApproval(ctx, rec.ID); !reflect.DeepEqual(after, before) {
					t.Fatalf("changed\n from %+v\n   to %+v", before, after)
				}
				if a := callAuditOf(t, s, rec.ID); !reflect.DeepEqual(a, audit) {
					t.Fatalf("audit %v, was %v", a, audit)
				}
				if keys := pendingKeys(t, s, 0, 10); len(keys) != 0 {
					t.Fatalf("continuations %v", keys)
				}
			})
		}
	})
	t.Run("AnExpiredCallCannotBeDecidedLater", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		rec := saveCall(t, s, newCall(callA))
		must(t)(s.ExpireCallApproval(ctx, rec.ID))
		for name, f := range map[string]func() error{
			"approve": func() error { _, err := s.ApproveCallApproval(ctx, rec.ID, "admin"); return err },
			"deny":    func() error { _, err := s.DenyCallApproval(ctx, rec.ID, "admin", ""); return err },
			"claim":   func() error { _, err := s.ClaimCallApproval(ctx, rec.ID); return err },
		} {
			if err := f(); !errors.Is(err, store.ErrConflict) {
				t.Errorf("%s after expiry: %v, want ErrConflict", name, err)
			}
		}
	})
	t.Run("DenyAndExpireRacingLeaveExactlyOneOutcome", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		for round := range 8 {
			call := newCall(callA)
			call.ResponseID = "race-" + strconv.Itoa(round)
			rec := saveCall(t, s, call)
			var wg sync.WaitGroup
			var denyErr, expireErr error
			wg.Go(func() { _, denyErr = s.DenyCallApproval(ctx, rec.ID, "bob", "no") })
			wg.Go(func() { _, expireErr = s.ExpireCallApproval(ctx, rec.ID) })
			wg.Wait()
			if (denyErr == nil) == (expireErr == nil) {
				t.Fatalf("round %d: deny %v, expire %v: want exactly one to win", round, denyErr, expireErr)
			}
			lost := denyErr
			want := store.CallApprovalExpired
			if denyErr == nil {
				lost, want = expireErr, store.CallApprovalDenied
			}
			if !errors.Is(lost, store.ErrConflict) {
				t.Fatalf("round %d: the loser's error %v, want ErrConflict", round, lost)
			}
			got, err := s.CallApproval(ctx, rec.ID)
			if err != nil || got.Status != want {
				t.Fatalf("round %d: record %+v, %v; want %s", round, got, err, want)
			}
			if a := callAuditOf(t, s, rec.ID); len(a) != 2 {
				t.Fatalf("round %d: audit %v, want the request and one outcome", round, a)
			}
		}
	})
	t.Run("AnUnknownRecordIsNotFound", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		if _, err := s.ExpireCallApproval(ctx, 42); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("expire unknown: %v, want ErrNotFound", err)
		}
	})
}

// must fails t when a store call returned an error.
func must(t *testing.T) func(store.CallApproval, error) {
	return func(_ store.CallApproval, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}
