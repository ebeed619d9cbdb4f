package drivertest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turncli/turncli/primary/store"
)

func newApproval(thread, command string) store.NewApproval {
	return store.NewApproval{Kind: "command", Channel: "room", Thread: thread, Author: "@alice", Command: command,
		Workdir: "primary:/work", Ceiling: time.Hour, Label: "build", Agent: "coder"}
}

func save(t *testing.T, s store.Store, a store.NewApproval) store.Approval {
	t.Helper()
	ap, created, err := s.SaveApproval(context.Background(), a)
	if err != nil || !created {
		t.Fatalf("save %q: created %v, %v", a.Command, created, err)
	}
	return ap
}

// auditOf returns the approval's audit entries as "action actor detail", oldest first.
func auditOf(t *testing.T, s store.Store, id int64) []string {
	t.Helper()
	es, err := s.ListAudit(context.Background(), store.AuditFilter{Subject: store.ApprovalSubject(id)})
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for i := len(es) - 1; i >= 0; i-- {
		out = append(out, es[i].Action+" "+es[i].Actor+" "+string(es[i].Detail))
	}
	return out
}

func (cf conformance) testApprovalKey(t *testing.T) {
	base := newApproval("t1", "make test")
	authority := map[string]func(*store.NewApproval){
		"Kind":    func(a *store.NewApproval) { a.Kind = "agent" },
		"Channel": func(a *store.NewApproval) { a.Channel = "other" },
		"Thread":  func(a *store.NewApproval) { a.Thread = "t2" },
		"Author":  func(a *store.NewApproval) { a.Author = "@bob" },
		"Command": func(a *store.NewApproval) { a.Command = "make test " },
		"Workdir": func(a *store.NewApproval) { a.Workdir = "key-a:/work" },
		"Ceiling": func(a *store.NewApproval) { a.Ceiling = time.Hour + time.Nanosecond },
	}
	for name, change := range authority {
		t.Run("ItDiffersWhen"+name+"Differs", func(t *testing.T) {
			a := base
			change(&a)
			if a.Key() == base.Key() {
				t.Fatalf("same key with a different %s", name)
			}
		})
	}
	t.Run("ItIsEqualWhenOnlyLabelAgentOrWorkerKeyDiffer", func(t *testing.T) {
		a := base
		a.Label, a.Agent, a.WorkerKey = "other label", "other agent", "key-a"
		if a.Key() != base.Key() {
			t.Fatal("presentation fields changed the key")
		}
		if len(base.Key()) != 64 {
			t.Fatalf("key %q is not hex SHA-256", base.Key())
		}
	})
	t.Run("FieldBoundariesCannotBeShifted", func(t *testing.T) {
		a, b := base, base
		a.Channel, a.Thread = "ab", "c"
		b.Channel, b.Thread = "a", "bc"
		if a.Key() == b.Key() {
			t.Fatal("two field lists share a key")
		}
	})
}

func (cf conformance) testSaveApproval(t *testing.T) {
	ctx := context.Background()

	t.Run("AnIdenticalPendingRequestReturnsTheSameApproval", func(t *testing.T) {
		clk := &clock{t: t0}
		s := cf.open(t, nil, clk)
		a := newApproval("t1", "make test")
		first := save(t, s, a)
		want := store.Approval{ID: first.ID, NewApproval: a, Key: a.Key(), Status: store.ApprovalPending, CreatedAt: t0}
		if !reflect.DeepEqual(first, want) {
			t.Fatalf("saved %+v, want %+v", first, want)
		}
		clk.Set(t0.Add(time.Minute))
		again := a
		again.Label = "another label" // not authority: the same card
		got, created, err := s.SaveApproval(ctx, again)
		if err != nil || created || !reflect.DeepEqual(got, first) {
			t.Fatalf("second save = %+v, created %v, %v; want the first, not created", got, created, err)
		}
		if read, err := s.Approval(ctx, first.ID); err != nil || !reflect.DeepEqual(read, first) {
			t.Fatalf("Approval = %+v, %v", read, err)
		}
	})

	t.Run("ADifferentCommandGetsItsOwnApproval", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		a := save(t, s, newApproval("t1", "make test"))
		b := save(t, s, newApproval("t1", "make lint"))
		if a.ID == b.ID || a.Key == b.Key {
			t.Fatalf("one approval for two commands: %d, %d", a.ID, b.ID)
		}
	})

	t.Run("ADecidedKeyGetsANewApprovalOnTheNextSave", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		a := newApproval("t1", "make test")
		denied := save(t, s, a)
		if _, err := s.DenyApproval(ctx, denied.ID, "admin", "not now"); err != nil {
			t.Fatal(err)
		}
		approved := save(t, s, a)
		if _, err := s.BeginApproval(ctx, approved.ID, "admin"); err != nil {
			t.Fatal(err)
		}
		third := save(t, s, a)
		if denied.ID == approved.ID || approved.ID == third.ID || third.Status != store.ApprovalPending {
			t.Fatalf("ids %d, %d, %d; third %s", denied.ID, approved.ID, third.ID, third.Status)
		}
	})

	t.Run("ConcurrentSavesOfOneRequestMakeOneApproval", func(t *testing.T) {
		dir := cf.newHarness(t)
		// Two stores on one file: the saves race within a process and across processes.
		stores := []store.Store{cf.open(t, dir, nil), cf.open(t, dir, nil)}
		const goroutines = 20
		var wg sync.WaitGroup
		ids := make([]int64, goroutines)
		createdBy := make([]bool, goroutines)
		errs := make([]error, goroutines)
		for g := range goroutines {
			wg.Go(func() {
				ap, created, err := stores[g%2].SaveApproval(ctx, newApproval("t1", "make test"))
				ids[g], createdBy[g], errs[g] = ap.ID, created, err
			})
		}
		wg.Wait()
		created := 0
		for g := range goroutines {
			if errs[g] != nil {
				t.Fatalf("save %d: %v", g, errs[g])
			}
			if ids[g] != ids[0] {
				t.Fatalf("save %d got approval %d, save 0 got %d", g, ids[g], ids[0])
			}
			if createdBy[g] {
				created++
			}
		}
		all, err := stores[0].ListApprovals(ctx, store.ApprovalFilter{})
		if created != 1 || err != nil || len(all) != 1 {
			t.Fatalf("created %d times, %d approvals (%v); want one", created, len(all), err)
		}
	})

	t.Run("InvalidRequestsAreRefused", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		for name, change := range map[string]func(*store.NewApproval){
			"kindAgent":       func(a *store.NewApproval) { a.Kind = "agent" },
			"noKind":          func(a *store.NewApproval) { a.Kind = "" },
			"noChannel":       func(a *store.NewApproval) { a.Channel = "" },
			"noCommand":       func(a *store.NewApproval) { a.Command = "" },
			"noWorkdir":       func(a *store.NewApproval) { a.Workdir = "" },
			"negativeCeiling": func(a *store.NewApproval) { a.Ceiling = -time.Second },
		} {
			a := newApproval("t1", "make test")
			change(&a)
			if _, _, err := s.SaveApproval(ctx, a); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("%s: %v, want ErrInvalid", name, err)
			}
		}
		if all, _ := s.ListApprovals(ctx, store.ApprovalFilter{}); len(all) != 0 {
			t.Fatalf("%d approvals saved", len(all))
		}
	})
}

func (cf conformance) testListApprovals(t *testing.T) {
	ctx := context.Background()
	s := cf.open(t, nil, nil)
	var ids []int64
	for _, a := range []store.NewApproval{
		newApproval("t1", "a"), newApproval("t2", "b"), newApproval("", "c"), newApproval("t1", "d"),
		{Kind: "command", Channel: "other", Thread: "t1", Command: "e", Workdir: "w"},
	} {
		ids = append(ids, save(t, s, a).ID)
	}
	if _, err := s.DenyApproval(ctx, ids[0], "admin", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CommentApproval(ctx, ids[3], "bob", "why?"); err != nil {
		t.Fatal(err)
	}
	list := func(f store.ApprovalFilter) []int64 {
		t.Helper()
		aps, err := s.ListApprovals(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		out := []int64{}
		for _, ap := range aps {
			out = append(out, ap.ID)
		}
		return out
	}
	for _, c := range []struct {
		name string
		f    store.ApprovalFilter
		want []int64
	}{
		{"EverythingNewestFirst", store.ApprovalFilter{}, []int64{ids[4], ids[3], ids[2], ids[1], ids[0]}},
		{"ByStatus", store.ApprovalFilter{Status: store.ApprovalPending}, []int64{ids[4], ids[3], ids[2], ids[1]}},
		{"ByConversation", store.ApprovalFilter{Channel: "room", Thread: "t1"}, []int64{ids[3], ids[0]}},
		{"AnEmptyThreadIsTheChannelsMainTimeline", store.ApprovalFilter{Channel: "room"}, []int64{ids[2]}},
		{"AThreadWithoutAChannelIsIgnored", store.ApprovalFilter{Thread: "t2", Limit: 2}, []int64{ids[4], ids[3]}},
		{"AllFiltersTogether", store.ApprovalFilter{Status: store.ApprovalDenied, Channel: "room", Thread: "t1"}, []int64{ids[0]}},
		{"Limited", store.ApprovalFilter{Limit: 1}, []int64{ids[4]}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := list(c.f); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("ids %v, want %v", got, c.want)
			}
		})
	}
	t.Run("ListedApprovalsCarryTheirComments", func(t *testing.T) {
		aps, err := s.ListApprovals(ctx, store.ApprovalFilter{Channel: "room", Thread: "t1"})
		if err != nil || len(aps) != 2 || len(aps[0].Comments) != 1 || aps[0].Comments[0].Text != "why?" || aps[1].Comments != nil {
			t.Fatalf("approvals %+v, %v", aps, err)
		}
	})
	t.Run("InvalidFiltersAreRefused", func(t *testing.T) {
		for _, f := range []store.ApprovalFilter{{Limit: 1001}, {Limit: -1}, {Status: "approved"}} {
			if _, err := s.ListApprovals(ctx, f); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("%+v: %v, want ErrInvalid", f, err)
			}
		}
	})
	if _, err := s.Approval(ctx, 999); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Approval(999): %v, want ErrNotFound", err)
	}
}

func (cf conformance) testApprovalDecisions(t *testing.T) {
	ctx := context.Background()

	t.Run("ApproveMovesPendingToExecutingOnce", func(t *testing.T) {
		clk := &clock{t: t0}
		s := cf.open(t, nil, clk)
		ap := save(t, s, newApproval("t1", "make test"))
		clk.Set(t0.Add(time.Minute))
		got, err := s.BeginApproval(ctx, ap.ID, "admin")
		if err != nil {
			t.Fatal(err)
		}
		want := ap
		want.Status, want.DecidedBy, want.DecidedAt = store.ApprovalExecuting, "admin", t0.Add(time.Minute)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("approved %+v, want %+v", got, want)
		}
		if _, err := s.BeginApproval(ctx, ap.ID, "admin-2"); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("approve replay: %v, want ErrConflict", err)
		}
		if _, err := s.DenyApproval(ctx, ap.ID, "bob", "too late"); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("deny after approve: %v, want ErrConflict", err)
		}
		if _, err := s.CommentApproval(ctx, ap.ID, "bob", "hm"); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("comment after approve: %v, want ErrConflict", err)
		}
		if read, _ := s.Approval(ctx, ap.ID); !reflect.DeepEqual(read, want) {
			t.Fatalf("after refused transitions %+v, want %+v", read, want)
		}
		wantAudit := []string{fmt.Sprintf(`approval.approve admin {"approval":%d}`, ap.ID)}
		if got := auditOf(t, s, ap.ID); !reflect.DeepEqual(got, wantAudit) {
			t.Fatalf("audit %q, want %q", got, wantAudit)
		}
	})

	t.Run("DenyIsFinalAndKeepsTheReason", func(t *testing.T) {
		clk := &clock{t: t0}
		s := cf.open(t, nil, clk)
		ap := save(t, s, newApproval("t1", "make test"))
		clk.Set(t0.Add(time.Minute))
		got, err := s.DenyApproval(ctx, ap.ID, "bob", "use the staging box")
		if err != nil {
			t.Fatal(err)
		}
		want := ap
		want.Status, want.DecidedBy, want.DecidedAt = store.ApprovalDenied, "bob", t0.Add(time.Minute)
		want.Note, want.SettledAt = "use the staging box", t0.Add(time.Minute)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("denied %+v, want %+v", got, want)
		}
		for name, replay := range map[string]func() error{
			"deny":    func() error { _, err := s.DenyApproval(ctx, ap.ID, "bob", ""); return err },
			"approve": func() error { _, err := s.BeginApproval(ctx, ap.ID, "admin"); return err },
			"comment": func() error { _, err := s.CommentApproval(ctx, ap.ID, "bob", "x"); return err },
			"settle":  func() error { _, err := s.SettleApproval(ctx, ap.ID, store.ApprovalFailed, ""); return err },
		} {
			if err := replay(); !errors.Is(err, store.ErrConflict) {
				t.Errorf("%s after deny: %v, want ErrConflict", name, err)
			}
		}
		wantAudit := []string{fmt.Sprintf(`approval.deny bob {"approval":%d,"reason":"use the staging box"}`, ap.ID)}
		if got := auditOf(t, s, ap.ID); !reflect.DeepEqual(got, wantAudit) {
			t.Fatalf("audit %q, want %q", got, wantAudit)
		}
	})

	t.Run("CommentsKeepItPendingOldestFirst", func(t *testing.T) {
		clk := &clock{t: t0}
		s := cf.open(t, nil, clk)
		ap := save(t, s, newApproval("t1", "make test"))
		clk.Set(t0.Add(time.Minute))
		if _, err := s.CommentApproval(ctx, ap.ID, "bob", "which branch?"); err != nil {
			t.Fatal(err)
		}
		clk.Set(t0.Add(2 * time.Minute))
		got, err := s.CommentApproval(ctx, ap.ID, "carol", "main")
		if err != nil {
			t.Fatal(err)
		}
		want := []store.ApprovalComment{
			{Actor: "bob", Text: "which branch?", At: t0.Add(time.Minute)},
			{Actor: "carol", Text: "main", At: t0.Add(2 * time.Minute)},
		}
		if got.Status != store.ApprovalPending || !reflect.DeepEqual(got.Comments, want) {
			t.Fatalf("after comments %+v", got)
		}
		if _, err := s.BeginApproval(ctx, ap.ID, "admin"); err != nil {
			t.Fatalf("approve after comments: %v", err)
		}
		wantAudit := []string{
			fmt.Sprintf(`approval.comment bob {"approval":%d,"comment":"which branch?"}`, ap.ID),
			fmt.Sprintf(`approval.comment carol {"approval":%d,"comment":"main"}`, ap.ID),
			fmt.Sprintf(`approval.approve admin {"approval":%d}`, ap.ID),
		}
		if got := auditOf(t, s, ap.ID); !reflect.DeepEqual(got, wantAudit) {
			t.Fatalf("audit %q, want %q", got, wantAudit)
		}
	})

	t.Run("AFailedAuditWriteLeavesTheApprovalUnchanged", func(t *testing.T) {
		s, failAudit := cf.openFaulty(t, nil, nil)
		ap := save(t, s, newApproval("t1", "make test"))
		// The audit entry is written after the change, in the same transaction; make it fail.
		failAudit.Store(true)
		if _, err := s.BeginApproval(ctx, ap.ID, "admin"); err == nil {
			t.Fatal("approved without its audit entry")
		}
		if _, err := s.CommentApproval(ctx, ap.ID, "bob", "x"); err == nil {
			t.Fatal("commented without its audit entry")
		}
		if got, err := s.Approval(ctx, ap.ID); err != nil || !reflect.DeepEqual(got, ap) {
			t.Fatalf("after failed transitions %+v, %v; want %+v", got, err, ap)
		}
	})

	t.Run("UnknownApprovalsAreNotFound", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		for name, call := range map[string]func() error{
			"approve": func() error { _, err := s.BeginApproval(ctx, 999, "admin"); return err },
			"deny":    func() error { _, err := s.DenyApproval(ctx, 999, "admin", ""); return err },
			"comment": func() error { _, err := s.CommentApproval(ctx, 999, "admin", "x"); return err },
			"settle":  func() error { _, err := s.SettleApproval(ctx, 999, store.ApprovalFailed, ""); return err },
			"job":     func() error { _, err := s.CreateApprovedJob(ctx, 999, newJob("t1"), store.JobCaps{}); return err },
		} {
			if err := call(); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s: %v, want ErrNotFound", name, err)
			}
		}
		if all, _ := s.ListAudit(ctx, store.AuditFilter{}); len(all) != 0 {
			t.Fatalf("%d audit entries", len(all))
		}
	})

	t.Run("InvalidDecisionsAreRefused", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		ap := save(t, s, newApproval("t1", "make test"))
		long := strings.Repeat("x", store.MaxApprovalComment+1)
		for name, call := range map[string]func() error{
			"approveWithoutActor": func() error { _, err := s.BeginApproval(ctx, ap.ID, ""); return err },
			"denyWithoutActor":    func() error { _, err := s.DenyApproval(ctx, ap.ID, "", ""); return err },
			"longReason":          func() error { _, err := s.DenyApproval(ctx, ap.ID, "bob", long); return err },
			"reasonNotUTF8":       func() error { _, err := s.DenyApproval(ctx, ap.ID, "bob", "\xff"); return err },
			"commentWithoutActor": func() error { _, err := s.CommentApproval(ctx, ap.ID, "", "x"); return err },
			"emptyComment":        func() error { _, err := s.CommentApproval(ctx, ap.ID, "bob", ""); return err },
			"longComment":         func() error { _, err := s.CommentApproval(ctx, ap.ID, "bob", long); return err },
			"commentNotUTF8":      func() error { _, err := s.CommentApproval(ctx, ap.ID, "bob", "a\xc3"); return err },
			"settleToPending":     func() error { _, err := s.SettleApproval(ctx, ap.ID, store.ApprovalPending, ""); return err },
			"settleToDenied":      func() error { _, err := s.SettleApproval(ctx, ap.ID, store.ApprovalDenied, ""); return err },
			"settleToExecuting":   func() error { _, err := s.SettleApproval(ctx, ap.ID, store.ApprovalExecuting, ""); return err },
			"longNote":            func() error { _, err := s.SettleApproval(ctx, ap.ID, store.ApprovalFailed, long); return err },
		} {
			if err := call(); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("%s: %v, want ErrInvalid", name, err)
			}
		}
		if _, err := s.CommentApproval(ctx, ap.ID, "bob", strings.Repeat("é", store.MaxApprovalComment/2)); err != nil {
			t.Errorf("a comment of exactly the maximum bytes: %v", err)
		}
	})
}
