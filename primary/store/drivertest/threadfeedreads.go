package drivertest

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/turncli/turncli/primary/store"
)

// testThreadFeedReads checks what a thread feed reader needs besides the feed: the wake-up
// after a commit that appended to it, a continuation read by its key after it was
// acknowledged, and the chat account a relayed decision's audit entry names.
func (cf conformance) testThreadFeedReads(t *testing.T) {
	ctx := context.Background()

	t.Run("OnlyACommitThatAppendedToTheFeedRings", func(t *testing.T) {
		var rings atomic.Int64
		s := store.New(cf.newHarness(t).Open(t), store.Options{ThreadEventsCommitted: func() { rings.Add(1) }})
		t.Cleanup(func() { s.Close() })
		if _, err := s.SetConversationMode(ctx, "room", "t", store.ModeAuto, "admin"); err != nil {
			t.Fatal(err)
		}
		if n := rings.Load(); n != 0 {
			t.Fatalf("a mode change rang %d times, want 0", n)
		}
		ap := save(t, s, newApproval("t", "make test"))
		if n := rings.Load(); n != 1 {
			t.Fatalf("saving an approval rang %d times, want 1", n)
		}
		if _, err := s.BeginApproval(ctx, ap.ID, "admin"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.BeginApproval(ctx, ap.ID, "admin"); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("second begin: %v, want ErrConflict", err)
		}
		if n := rings.Load(); n != 2 {
			t.Fatalf("a decision and a refused one rang %d times in all, want 2", n)
		}
	})

	t.Run("AContinuationIsReadByItsKeyAfterItsAcknowledgement", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		id, _, err := s.EnqueueContinuation(ctx, store.NewContinuation{IdempotencyKey: "job:7", Channel: "room", Thread: "t", Text: "report", Post: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AckContinuation(ctx, id); err != nil {
			t.Fatal(err)
		}
		c, err := s.ContinuationByKey(ctx, "job:7")
		if err != nil || c.ID != id || c.Text != "report" || !c.Post || c.Channel != "room" || c.Thread != "t" || c.AckedAt.IsZero() {
			t.Fatalf("ContinuationByKey: %+v, %v", c, err)
		}
		if _, err := s.ContinuationByKey(ctx, "job:8"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown key: %v, want ErrNotFound", err)
		}
		if _, err := s.ContinuationByKey(ctx, ""); !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("empty key: %v, want ErrInvalid", err)
		}
	})

	t.Run("ARelayedDecisionsAuditEntryNamesTheChatAccount", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		ap := save(t, s, newApproval("t", "make test"))
		via := store.Via{Surface: "matrix", ChatUserID: "@ada:example.org"}
		if _, err := s.DenyApproval(store.WithVia(ctx, via), ap.ID, "ada", "no", store.NewContinuation{
			IdempotencyKey: "deny", Channel: "room", Thread: "t", Text: "denied"}); err != nil {
			t.Fatal(err)
		}
		entries, err := s.ListAudit(ctx, store.AuditFilter{Subject: store.ApprovalSubject(ap.ID)})
		if err != nil || len(entries) != 1 {
			t.Fatalf("audit: %+v, %v", entries, err)
		}
		got, ok := store.ViaOfAudit(entries[0])
		if !ok || got != via || entries[0].Actor != "ada" {
			t.Fatalf("audit entry %s by %s: via %+v %v, want %+v", entries[0].Detail, entries[0].Actor, got, ok, via)
		}
		if _, ok := store.ViaOfAudit(store.AuditEntry{Detail: []byte(`{"reason":"no"}`)}); ok {
			t.Fatal("an entry without via names an account")
		}
	})
}
