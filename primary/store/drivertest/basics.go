package drivertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/turncli/turncli/primary/store"
)

func enqueue(t *testing.T, s store.Store, key string) int64 {
	t.Helper()
	id, created, err := s.EnqueueContinuation(context.Background(), store.NewContinuation{
		IdempotencyKey: key, Channel: "room", Thread: "t1", Text: "text of " + key,
	})
	if err != nil || !created {
		t.Fatalf("enqueue %s: created %v, %v", key, created, err)
	}
	return id
}

func pendingKeys(t *testing.T, s store.Store, after int64, limit int) []string {
	t.Helper()
	cs, err := s.PendingContinuations(context.Background(), after, limit)
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{}
	for _, c := range cs {
		keys = append(keys, c.IdempotencyKey)
	}
	return keys
}

func (cf conformance) testContinuations(t *testing.T) {
	ctx := context.Background()

	t.Run("EnqueueIsIdempotentByKey", func(t *testing.T) {
		clk := &clock{t: t0}
		s := cf.open(t, nil, clk)
		id, created, err := s.EnqueueContinuation(ctx, store.NewContinuation{IdempotencyKey: "job/7", Channel: "room", Thread: "t", Text: "first"})
		if err != nil || !created {
			t.Fatalf("first enqueue: %v, created %v", err, created)
		}
		clk.Set(t0.Add(time.Hour))
		again, created, err := s.EnqueueContinuation(ctx, store.NewContinuation{IdempotencyKey: "job/7", Channel: "other", Text: "second"})
		if err != nil || created || again != id {
			t.Fatalf("second enqueue: id %d (first %d), created %v, %v", again, id, created, err)
		}
		cs, err := s.PendingContinuations(ctx, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		want := []store.Continuation{{ID: id, IdempotencyKey: "job/7", Channel: "room", Thread: "t", Text: "first", CreatedAt: t0}}
		if !reflect.DeepEqual(cs, want) {
			t.Fatalf("pending %+v, want %+v", cs, want)
		}
	})

	t.Run("AnAcknowledgedKeyStillDeduplicates", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		id := enqueue(t, s, "job/1")
		if err := s.AckContinuation(ctx, id); err != nil {
			t.Fatal(err)
		}
		again, created, err := s.EnqueueContinuation(ctx, store.NewContinuation{IdempotencyKey: "job/1", Channel: "room", Text: "x"})
		if err != nil || created || again != id {
			t.Fatalf("re-enqueue after ack: id %d, created %v, %v", again, created, err)
		}
		if got := pendingKeys(t, s, 0, 10); len(got) != 0 {
			t.Fatalf("pending %v", got)
		}
	})

	t.Run("PendingIsOldestFirstAfterTheCursorAndExcludesAcknowledged", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		var ids []int64
		for i := range 5 {
			ids = append(ids, enqueue(t, s, fmt.Sprintf("k%d", i)))
		}
		if err := s.AckContinuation(ctx, ids[1]); err != nil {
			t.Fatal(err)
		}
		if got, want := pendingKeys(t, s, 0, 10), []string{"k0", "k2", "k3", "k4"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("pending %v, want %v", got, want)
		}
		if got, want := pendingKeys(t, s, ids[2], 10), []string{"k3", "k4"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("pending after %d: %v, want %v", ids[2], got, want)
		}
		if got, want := pendingKeys(t, s, 0, 2), []string{"k0", "k2"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("pending limit 2: %v, want %v", got, want)
		}
	})

	t.Run("AckIsIdempotentAndUnknownIdsAreNotFound", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		id := enqueue(t, s, "k")
		for range 2 {
			if err := s.AckContinuation(ctx, id); err != nil {
				t.Fatalf("ack: %v", err)
			}
		}
		if err := s.AckContinuation(ctx, id+100); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("ack of an unknown id: %v, want ErrNotFound", err)
		}
	})

	t.Run("DeliveriesAreCountedWhilePending", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		id := enqueue(t, s, "k")
		for want := 1; want <= 3; want++ {
			attempt, pending, err := s.RecordContinuationDelivery(ctx, id)
			if err != nil || !pending || attempt != want {
				t.Fatalf("delivery %d: attempt %d, pending %v, %v", want, attempt, pending, err)
			}
		}
		cs, _ := s.PendingContinuations(ctx, 0, 1)
		if len(cs) != 1 || cs[0].DeliveredCount != 3 {
			t.Fatalf("pending %+v, want delivered_count 3", cs)
		}
		if err := s.AckContinuation(ctx, id); err != nil {
			t.Fatal(err)
		}
		if _, pending, err := s.RecordContinuationDelivery(ctx, id); err != nil || pending {
			t.Fatalf("delivery after ack: pending %v, %v", pending, err)
		}
		if _, pending, err := s.RecordContinuationDelivery(ctx, id+1); err != nil || pending {
			t.Fatalf("delivery of an unknown id: pending %v, %v", pending, err)
		}
	})

	t.Run("IncompleteContinuationsAreInvalid", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		long := string(make([]byte, store.MaxIdempotencyKey+1))
		for name, c := range map[string]store.NewContinuation{
			"noKey":     {Channel: "c", Text: "x"},
			"longKey":   {IdempotencyKey: long, Channel: "c", Text: "x"},
			"noChannel": {IdempotencyKey: "k", Text: "x"},
			"noText":    {IdempotencyKey: "k", Channel: "c"},
		} {
			if _, _, err := s.EnqueueContinuation(ctx, c); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("%s: %v, want ErrInvalid", name, err)
			}
		}
	})
}

func (cf conformance) testConversationModes(t *testing.T) {
	ctx := context.Background()

	t.Run("AConversationNeverSetIsAsk", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		m, err := s.ConversationMode(ctx, "room", "t")
		if err != nil || m != (store.ModeSetting{Mode: store.ModeAsk}) {
			t.Fatalf("mode %+v, %v", m, err)
		}
	})

	t.Run("SettingAModeIsReadBackWithItsAuditEntry", func(t *testing.T) {
		clk := &clock{t: t0}
		s := cf.open(t, nil, clk)
		if _, err := s.SetConversationMode(ctx, "room", "t", store.ModeAuto, "admin-1"); err != nil {
			t.Fatal(err)
		}
		clk.Set(t0.Add(time.Minute))
		set, err := s.SetConversationMode(ctx, "room", "t", store.ModeAdmin, "admin-2")
		if err != nil {
			t.Fatal(err)
		}
		want := store.ModeSetting{Mode: store.ModeAdmin, UpdatedAt: t0.Add(time.Minute), UpdatedBy: "admin-2"}
		if got, err := s.ConversationMode(ctx, "room", "t"); err != nil || got != want || set != want {
			t.Fatalf("mode %+v (returned %+v), %v; want %+v", got, set, err, want)
		}
		if other, _ := s.ConversationMode(ctx, "room", ""); other.Mode != store.ModeAsk {
			t.Fatalf("the channel's main timeline changed too: %+v", other)
		}
		entries, err := s.ListAudit(ctx, store.AuditFilter{Subject: store.ConversationSubject("room", "t")})
		if err != nil || len(entries) != 2 {
			t.Fatalf("audit %+v, %v", entries, err)
		}
		latest := entries[0]
		var detail map[string]string
		if err := json.Unmarshal(latest.Detail, &detail); err != nil {
			t.Fatal(err)
		}
		if latest.Actor != "admin-2" || latest.Action != store.ActionConversationModeSet || !latest.At.Equal(t0.Add(time.Minute)) ||
			!reflect.DeepEqual(detail, map[string]string{"channel": "room", "thread": "t", "mode": "admin", "previous": "auto"}) {
			t.Fatalf("audit entry %+v, detail %v", latest, detail)
		}
	})

	t.Run("AFailedAuditWriteRollsBackTheModeWrite", func(t *testing.T) {
		s, failAudit := cf.openFaulty(t, nil, nil)
		if _, err := s.SetConversationMode(ctx, "room", "t", store.ModeAuto, "admin-1"); err != nil {
			t.Fatal(err)
		}
		// The audit entry is written after the change, in the same transaction; make it fail.
		failAudit.Store(true)
		if _, err := s.SetConversationMode(ctx, "room", "t", store.ModeAdmin, "admin-2"); err == nil {
			t.Fatal("SetConversationMode succeeded without its audit entry")
		}
		if m, err := s.ConversationMode(ctx, "room", "t"); err != nil || m.Mode != store.ModeAuto || m.UpdatedBy != "admin-1" {
			t.Fatalf("mode after the failed change: %+v, %v; want auto by admin-1", m, err)
		}
		if entries, _ := s.ListAudit(ctx, store.AuditFilter{}); len(entries) != 1 {
			t.Fatalf("audit has %d entries, want 1", len(entries))
		}
	})

	t.Run("InvalidChangesAreRefused", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		for name, args := range map[string]struct {
			channel string
			mode    store.Mode
			actor   string
		}{
			"unknownMode": {"room", "yolo", "a"},
			"noActor":     {"room", store.ModeAuto, ""},
			"noChannel":   {"", store.ModeAuto, "a"},
		} {
			if _, err := s.SetConversationMode(ctx, args.channel, "", args.mode, args.actor); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("%s: %v, want ErrInvalid", name, err)
			}
		}
	})
}

func (cf conformance) testAudit(t *testing.T) {
	ctx := context.Background()

	t.Run("EntriesListNewestFirstFilteredAndPaged", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		for i := range 5 {
			actor := "alice"
			if i%2 == 1 {
				actor = "bob"
			}
			if _, err := s.AppendAudit(ctx, store.NewAuditEntry{Actor: actor, Action: "approval.approve",
				Subject: fmt.Sprintf("approval/%d", i), Detail: json.RawMessage(fmt.Sprintf(`{ "n": %d }`, i))}); err != nil {
				t.Fatal(err)
			}
		}
		subjects := func(es []store.AuditEntry) []string {
			out := []string{}
			for _, e := range es {
				out = append(out, e.Subject)
			}
			return out
		}
		all, err := s.ListAudit(ctx, store.AuditFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := subjects(all), []string{"approval/4", "approval/3", "approval/2", "approval/1", "approval/0"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("all %v, want %v", got, want)
		}
		if string(all[0].Detail) != `{"n":4}` {
			t.Fatalf("detail %s, want compacted", all[0].Detail)
		}
		alice, _ := s.ListAudit(ctx, store.AuditFilter{Actor: "alice", Limit: 2})
		if got, want := subjects(alice), []string{"approval/4", "approval/2"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("alice page 1 %v, want %v", got, want)
		}
		next, _ := s.ListAudit(ctx, store.AuditFilter{Actor: "alice", BeforeID: alice[1].ID})
		if got, want := subjects(next), []string{"approval/0"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("alice page 2 %v, want %v", got, want)
		}
	})

	t.Run("DetailMustBeAJSONObject", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		for _, detail := range []string{`[1]`, `"x"`, `{`} {
			if _, err := s.AppendAudit(ctx, store.NewAuditEntry{Actor: "a", Action: "b", Detail: json.RawMessage(detail)}); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("detail %s: %v, want ErrInvalid", detail, err)
			}
		}
		if _, err := s.AppendAudit(ctx, store.NewAuditEntry{Actor: "a", Action: "b"}); err != nil {
			t.Errorf("empty detail: %v", err)
		}
	})
}

func (cf conformance) testConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	dir := cf.newHarness(t)
	// Two stores on one database stand for this primary and another process: every write of
	// either commits, none fails for the other holding a lock.
	stores := []store.Store{cf.open(t, dir, nil), cf.open(t, dir, nil)}
	const goroutines, each = 8, 200
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		s := stores[g%len(stores)]
		wg.Go(func() {
			for i := range each {
				if _, _, err := s.EnqueueContinuation(ctx, store.NewContinuation{
					IdempotencyKey: fmt.Sprintf("g%d/%d", g, i), Channel: "room", Text: "x",
				}); err != nil {
					errs <- err
					return
				}
				if i%50 == 0 { // readers never wait for the writer
					if _, err := s.PendingContinuations(ctx, 0, 10); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent enqueue: %v", err)
	}
	cs, err := stores[0].PendingContinuations(ctx, 0, goroutines*each+1)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != goroutines*each {
		t.Fatalf("%d continuations, want %d", len(cs), goroutines*each)
	}
	for i := 1; i < len(cs); i++ {
		if cs[i].ID <= cs[i-1].ID {
			t.Fatalf("ids not increasing at %d: %d after %d", i, cs[i].ID, cs[i-1].ID)
		}
	}
}
