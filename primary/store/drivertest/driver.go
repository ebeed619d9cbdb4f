package drivertest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// openDriver opens a driver over fresh storage, closed at cleanup.
func (cf conformance) openDriver(t *testing.T) store.Driver {
	t.Helper()
	d := cf.newHarness(t).Open(t)
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return d
}

// update runs f in one transaction of d and fails the test when it fails.
func update(t *testing.T, d store.Driver, f func(tx store.Tx) error) {
	t.Helper()
	if err := d.Update(context.Background(), f); err != nil {
		t.Fatal(err)
	}
}

// testDriver checks the driver's own contract, below the rules of store.Portable.
func (cf conformance) testDriver(t *testing.T) {
	ctx := context.Background()

	t.Run("AFailedTransactionKeepsNothing", func(t *testing.T) {
		d := cf.openDriver(t)
		boom := errors.New("boom")
		err := d.Update(ctx, func(tx store.Tx) error {
			if _, _, err := tx.InsertContinuation(ctx, store.NewContinuation{IdempotencyKey: "k", Channel: "room", Text: "x"}, t0); err != nil {
				return err
			}
			if _, err := tx.QueueAudit(ctx, store.NewAuditEntry{Actor: "a", Action: "b", Detail: json.RawMessage(`{}`)}, t0)(); err != nil {
				return err
			}
			if cs, err := tx.PendingContinuations(ctx, 0, 0); err != nil || len(cs) != 1 {
				t.Errorf("inside the transaction: %d pending, %v; want its own write", len(cs), err)
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("Update = %v, want f's error", err)
		}
		cs, _ := d.PendingContinuations(ctx, 0, 0)
		audit, _ := d.ListAudit(ctx, store.AuditFilter{})
		if len(cs) != 0 || len(audit) != 0 {
			t.Fatalf("after the failed transaction: %d continuations, %d audit entries", len(cs), len(audit))
		}
	})

	t.Run("UnknownRecordsAreNotFound", func(t *testing.T) {
		d := cf.openDriver(t)
		for name, read := range map[string]func() error{
			"job":               func() error { _, err := d.Job(ctx, 7); return err },
			"approval":          func() error { _, err := d.Approval(ctx, 7); return err },
			"call approval":     func() error { _, err := d.CallApproval(ctx, 7); return err },
			"prompt":            func() error { _, err := d.Prompt(ctx, 7); return err },
			"question request":  func() error { _, err := d.QuestionRequest(ctx, 7); return err },
			"conversation mode": func() error { _, err := d.ConversationMode(ctx, "room", ""); return err },
			"shell mode":        func() error { _, err := d.ShellMode(ctx, "room", "", "code"); return err },
			"ack": func() error {
				return d.Update(ctx, func(tx store.Tx) error { return tx.AckContinuation(ctx, 7, t0) })
			},
			"operator removal": func() error {
				return d.Update(ctx, func(tx store.Tx) error { return tx.DeleteOperator(ctx, "nobody") })
			},
			"allowance removal": func() error {
				return d.Update(ctx, func(tx store.Tx) error {
					_, err := tx.DeletePermissionAllowance(ctx, store.PermissionAllowance{Channel: "room", ToolName: "Bash", Scope: store.AllowThread})
					return err
				})
			},
		} {
			if err := read(); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s: %v, want ErrNotFound", name, err)
			}
		}
	})

	t.Run("UniqueRecordsAreRefusedOrFound", func(t *testing.T) {
		d := cf.openDriver(t)
		op := store.Operator{Name: "ann", Role: store.RoleAdmin, Digest: [32]byte{1}, CreatedAt: t0}
		call := store.CallApproval{NewCallApproval: newCall(callA), Status: store.CallApprovalWaiting, CreatedAt: t0}
		call.Checkpoint = nil
		ap := store.Approval{NewApproval: newApproval("t1", "make test"), Status: store.ApprovalPending, CreatedAt: t0}
		ap.Key = ap.NewApproval.Key()
		q := store.QuestionRequest{Channel: "room", Thread: "t1", Requester: "@alice", Title: "A", Presentation: "auto",
			Questions: json.RawMessage(`[{"id":"q"}]`), Status: store.QuestionPending, Revision: 1,
			Draft: json.RawMessage(`{}`), CreatedAt: t0, UpdatedAt: t0}
		var first [4]int64
		update(t, d, func(tx store.Tx) (err error) {
			if err = tx.InsertOperator(ctx, op); err != nil {
				return err
			}
			if first[0], err = tx.InsertCallApproval(ctx, call); err != nil {
				return err
			}
			if first[1], _, err = tx.InsertApproval(ctx, ap); err != nil {
				return err
			}
			if first[2], _, err = tx.InsertQuestionRequest(ctx, strings.Repeat("0", 64), q); err != nil {
				return err
			}
			first[3], _, err = tx.InsertContinuation(ctx, store.NewContinuation{IdempotencyKey: "k", Channel: "room", Text: "x"}, t0)
			return err
		})
		update(t, d, func(tx store.Tx) error {
			if err := tx.InsertOperator(ctx, op); !errors.Is(err, store.ErrExists) {
				t.Errorf("second operator ann: %v, want ErrExists", err)
			}
			if _, err := tx.InsertCallApproval(ctx, call); !errors.Is(err, store.ErrExists) {
				t.Errorf("second call of the response: %v, want ErrExists", err)
			}
			if id, created, err := tx.InsertApproval(ctx, ap); err != nil || created || id != first[1] {
				t.Errorf("second pending approval of a key: %d, %v, %v; want %d, not created", id, created, err, first[1])
			}
			other := q
			other.Title = "B"
			if id, created, err := tx.InsertQuestionRequest(ctx, strings.Repeat("1", 64), other); err != nil || created || id != first[2] {
				t.Errorf("second pending request of a person: %d, %v, %v; want %d, not created", id, created, err, first[2])
			}
			if id, created, err := tx.InsertContinuation(ctx, store.NewContinuation{IdempotencyKey: "k", Channel: "other", Text: "y"}, t0); err != nil || created || id != first[3] {
				t.Errorf("second continuation of a key: %d, %v, %v; want %d, not created", id, created, err, first[3])
			}
			return nil
		})
	})

	t.Run("AQueuedWriteRunsBeforeTheNextStatement", func(t *testing.T) {
		d := cf.openDriver(t)
		update(t, d, func(tx store.Tx) error {
			first := tx.QueueContinuation(ctx, store.NewContinuation{IdempotencyKey: "k", Channel: "room", Text: "x"}, t0)
			again := tx.QueueContinuation(ctx, store.NewContinuation{IdempotencyKey: "k", Channel: "other", Text: "y"}, t0)
			// A read of the transaction sees the queued inserts: they went with it at the latest.
			pending, err := tx.PendingContinuations(ctx, 0, 10)
			if err != nil || len(pending) != 1 || pending[0].Channel != "room" || pending[0].Text != "x" {
				t.Errorf("pending after two queued inserts of a key = %+v, %v; want the first only", pending, err)
			}
			id, created, err := first()
			if err != nil || !created || len(pending) != 1 || id != pending[0].ID {
				t.Errorf("first queued continuation: %d, %v, %v; want the pending one, created", id, created, err)
			}
			if id2, created, err := again(); err != nil || created || id2 != id {
				t.Errorf("second queued continuation of the key: %d, %v, %v; want %d, not created", id2, created, err, id)
			}
			return nil
		})
	})

	t.Run("AQueuedApprovalChangeWritesOnlyFromTheStateGiven", func(t *testing.T) {
		d := cf.openDriver(t)
		ap := store.Approval{NewApproval: newApproval("t1", "make test"), Status: store.ApprovalPending, CreatedAt: t0}
		ap.Key = ap.NewApproval.Key()
		comment := store.ApprovalComment{Actor: "@bob", Text: "looks fine", At: t0}
		update(t, d, func(tx store.Tx) (err error) {
			if ap.ID, _, err = tx.InsertApproval(ctx, ap); err != nil {
				return err
			}
			_, err = tx.InsertApprovalComment(ctx, ap.ID, store.ApprovalPending, comment)
			return err
		})
		t1 := t0.Add(time.Second)
		// A change from another state, without the job it needs, or of no approval fails its
		// transaction, even when its result is never read: what was queued after it is not
		// kept.
		for i, refused := range []struct {
			id      int64
			from    store.ApprovalStatus
			withJob bool
			change  store.ApprovalChange
		}{
			{ap.ID, store.ApprovalExecuting, false, store.ApprovalChange{Status: store.ApprovalFailed, Note: "x", SettledAt: t1}},
			{ap.ID, store.ApprovalPending, true, store.ApprovalChange{Status: store.ApprovalConsumed, Note: "x", SettledAt: t1}},
			{999, store.ApprovalPending, false, store.ApprovalChange{Status: store.ApprovalExecuting, DecidedBy: "ann", DecidedAt: t1}},
		} {
			err := d.Update(ctx, func(tx store.Tx) error {
				tx.QueueApprovalChange(ctx, refused.id, refused.from, refused.withJob, refused.change)
				tx.QueueAudit(ctx, store.NewAuditEntry{Actor: "ann", Action: "approval.x", Detail: json.RawMessage(`{}`)}, t1)
				return nil
			})
			if !errors.Is(err, store.ErrUnmatched) {
				t.Errorf("refused change %d: Update = %v, want ErrUnmatched", i, err)
			}
		}
		if audit, err := d.ListAudit(ctx, store.AuditFilter{}); err != nil || len(audit) != 0 {
			t.Errorf("audit after refused changes %+v, %v; want none kept", audit, err)
		}
		var begun func() (store.Approval, error)
		update(t, d, func(tx store.Tx) error {
			begun = tx.QueueApprovalChange(ctx, ap.ID, store.ApprovalPending, false, store.ApprovalChange{Status: store.ApprovalExecuting, DecidedBy: "ann", DecidedAt: t1})
			return nil
		})
		// Read once the transaction has committed: the result came with the commit.
		got, err := begun()
		if err != nil {
			t.Fatalf("change from pending: %v; want it written", err)
		}
		want := ap
		want.Status, want.DecidedBy, want.DecidedAt = store.ApprovalExecuting, "ann", t1
		want.Comments = []store.ApprovalComment{comment}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("changed approval = %+v\nwant %+v", got, want)
		}
		if got, err := d.Approval(ctx, ap.ID); err != nil || got.Status != store.ApprovalExecuting || got.DecidedBy != "ann" ||
			!got.DecidedAt.Equal(t1) || got.Note != "" || !got.SettledAt.IsZero() {
			t.Errorf("stored approval = %+v, %v; want executing, decided by ann, not settled", got, err)
		}
	})

	t.Run("AQueuedJobEndWritesOnlyARunningJobAndFailsForNone", func(t *testing.T) {
		d := cf.openDriver(t)
		var id int64
		update(t, d, func(tx store.Tx) (err error) {
			id, err = tx.InsertJob(ctx, store.Job{NewJob: newJob("t1"), Status: store.JobRunning, CreatedAt: t0, LogPath: "/logs/1.log"})
			return err
		})
		code := 3
		result := store.JobResult{Outcome: "failed", ExitCode: &code, Tail: "boom"}
		t1 := t0.Add(time.Second)
		var ended []func() (bool, error)
		for range 2 {
			update(t, d, func(tx store.Tx) error {
				ended = append(ended, tx.QueueEndJob(ctx, id, store.JobRunning, store.JobFinished, t1, result))
				return nil
			})
		}
		if first, err := ended[0](); err != nil || !first {
			t.Errorf("first end: %v, %v; want written", first, err)
		}
		if second, err := ended[1](); err != nil || second {
			t.Errorf("second end: %v, %v; want not written, and no failure", second, err)
		}
		if j, err := d.Job(ctx, id); err != nil || j.Status != store.JobFinished || !j.EndedAt.Equal(t1) || j.Outcome != "failed" ||
			j.ExitCode == nil || *j.ExitCode != 3 || j.Tail != "boom" || j.LogPath != "/logs/1.log" {
			t.Errorf("ended job %+v, %v", j, err)
		}
		err := d.Update(ctx, func(tx store.Tx) error {
			tx.QueueContinuation(ctx, store.NewContinuation{IdempotencyKey: "job:999", Channel: "room", Text: "x"}, t1)
			tx.QueueEndJob(ctx, 999, store.JobRunning, store.JobFinished, t1, result)
			return nil
		})
		if !errors.Is(err, store.ErrUnmatched) {
			t.Errorf("end of no job: Update = %v, want ErrUnmatched", err)
		}
		if cs, err := d.PendingContinuations(ctx, 0, 0); err != nil || len(cs) != 0 {
			t.Errorf("continuations after the end of no job %+v, %v; want none kept", cs, err)
		}
	})

	t.Run("UpdatesWriteOnlyFromThePriorStateGiven", func(t *testing.T) {
		d := cf.openDriver(t)
		var job store.Job
		var ap store.Approval
		var call store.CallApproval
		var pr store.Prompt
		var q store.QuestionRequest
		update(t, d, func(tx store.Tx) error {
			id, err := tx.InsertJob(ctx, store.Job{NewJob: newJob("t1"), Status: store.JobRunning, CreatedAt: t0, LogPath: "/logs/1.log"})
			if err != nil {
				return err
			}
			if job, err = tx.Job(ctx, id); err != nil {
				return err
			}
			a := store.Approval{NewApproval: newApproval("t1", "make test"), Status: store.ApprovalPending, CreatedAt: t0}
			a.Key = a.NewApproval.Key()
			if id, _, err = tx.InsertApproval(ctx, a); err != nil {
				return err
			}
			if ap, err = tx.Approval(ctx, id); err != nil {
				return err
			}
			c := store.CallApproval{NewCallApproval: newCall(callA), Status: store.CallApprovalWaiting, CreatedAt: t0}
			if id, err = tx.InsertCallApproval(ctx, c); err != nil {
				return err
			}
			if call, err = tx.CallApproval(ctx, id); err != nil {
				return err
			}
			p := newApprovalPrompt("t1")
			if id, err = tx.InsertPrompt(ctx, store.Prompt{Kind: p.Kind, Channel: p.Channel, Thread: p.Thread, Title: p.Title,
				Details: p.Details, ApproveLabel: p.ApproveLabel, DenyLabel: p.DenyLabel, Status: store.PromptPending,
				CreatedAt: t0, Deadline: p.Deadline}); err != nil {
				return err
			}
			if pr, err = tx.Prompt(ctx, id); err != nil {
				return err
			}
			if id, _, err = tx.InsertQuestionRequest(ctx, strings.Repeat("0", 64), store.QuestionRequest{Channel: "room", Thread: "t1",
				Requester: "@alice", Title: "A", Presentation: "auto", Questions: json.RawMessage(`[{"id":"q"}]`),
				Status: store.QuestionPending, Revision: 1, Draft: json.RawMessage(`{}`), CreatedAt: t0, UpdatedAt: t0}); err != nil {
				return err
			}
			q, err = tx.QuestionRequest(ctx, id)
			return err
		})
		later := t0.Add(time.Minute)

		// Each record moves once from the state read, and the same move from that (now stale)
		// state matches nothing and changes nothing.
		jobDone := job
		jobDone.Status, jobDone.EndedAt, jobDone.Outcome = store.JobFinished, later, "success"
		apDecided := ap
		apDecided.Status, apDecided.DecidedBy, apDecided.DecidedAt = store.ApprovalExecuting, "admin", later
		callDecided := call
		callDecided.Status, callDecided.DecidedBy, callDecided.DecidedAt = store.CallApprovalApproved, "admin", later
		prDecided := pr
		prDecided.Status, prDecided.Decision, prDecided.DecidedBy, prDecided.DecidedAt = store.PromptApproved, store.DecisionApprove, "admin", later
		qDrafted := q
		qDrafted.Revision, qDrafted.Draft, qDrafted.UpdatedAt = 2, json.RawMessage(`{"q":{"values":["a"],"custom":""}}`), later
		for _, stale := range []bool{false, true} {
			update(t, d, func(tx store.Tx) error {
				for name, write := range map[string]func() (bool, error){
					"job":              func() (bool, error) { return tx.UpdateJob(ctx, store.JobRunning, jobDone) },
					"approval":         func() (bool, error) { return tx.UpdateApproval(ctx, ap, apDecided) },
					"call approval":    func() (bool, error) { return tx.UpdateCallApproval(ctx, store.CallApprovalWaiting, callDecided) },
					"prompt":           func() (bool, error) { return tx.UpdatePrompt(ctx, store.PromptPending, prDecided) },
					"question request": func() (bool, error) { return tx.UpdateQuestionRequest(ctx, q, qDrafted) },
					"approval comment": func() (bool, error) {
						return tx.InsertApprovalComment(ctx, ap.ID, store.ApprovalPending, store.ApprovalComment{Actor: "bob", Text: "late", At: later})
					},
				} {
					ok, err := write()
					if err != nil {
						return err
					}
					// The comment comes after the approval's move in no fixed order: it may
					// land first while the approval is still pending.
					if name == "approval comment" {
						continue
					}
					if ok == stale {
						t.Errorf("%s, stale %v: matched %v", name, stale, ok)
					}
				}
				return nil
			})
		}
		for name, check := range map[string]func() (any, any, error){
			"job": func() (any, any, error) { got, err := d.Job(ctx, job.ID); return got, jobDone, err },
			"call approval": func() (any, any, error) {
				got, err := d.CallApproval(ctx, call.ID)
				return got, callDecided, err
			},
			"prompt":           func() (any, any, error) { got, err := d.Prompt(ctx, pr.ID); return got, prDecided, err },
			"question request": func() (any, any, error) { got, err := d.QuestionRequest(ctx, q.ID); return got, qDrafted, err },
		} {
			got, want, err := check()
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s = %+v, %v\nwant %+v", name, got, err, want)
			}
		}
		got, err := d.Approval(ctx, ap.ID)
		if err != nil || got.Status != store.ApprovalExecuting || got.DecidedBy != "admin" || !got.DecidedAt.Equal(later) {
			t.Errorf("approval = %+v, %v", got, err)
		}
		update(t, d, func(tx store.Tx) error {
			ok, err := tx.InsertApprovalComment(ctx, ap.ID, store.ApprovalPending, store.ApprovalComment{Actor: "bob", Text: "x", At: later})
			if err == nil && ok {
				t.Error("a comment was added to an approval no longer pending")
			}
			// An approval's job is part of its prior state: linking a second job fails.
			linked := got
			linked.JobID = job.ID
			if ok, err := tx.UpdateApproval(ctx, got, linked); err != nil || !ok {
				t.Errorf("link job: %v, %v", ok, err)
			}
			if ok, err := tx.UpdateApproval(ctx, got, linked); err != nil || ok {
				t.Errorf("link job again from no job: %v, %v; want no match", ok, err)
			}
			return err
		})
	})

	t.Run("ListsWithoutALimitReturnEverythingNewestFirst", func(t *testing.T) {
		d := cf.openDriver(t)
		update(t, d, func(tx store.Tx) error {
			for range 3 {
				if _, err := tx.QueueAudit(ctx, store.NewAuditEntry{Actor: "a", Action: "b", Detail: json.RawMessage(`{}`)}, t0)(); err != nil {
					return err
				}
			}
			return nil
		})
		all, err := d.ListAudit(ctx, store.AuditFilter{})
		if err != nil || len(all) != 3 || all[0].ID < all[1].ID || all[1].ID < all[2].ID {
			t.Fatalf("all entries %+v, %v", all, err)
		}
		two, err := d.ListAudit(ctx, store.AuditFilter{Limit: 2})
		if err != nil || len(two) != 2 || two[0].ID != all[0].ID {
			t.Fatalf("two entries %+v, %v", two, err)
		}
	})

	t.Run("RacingClaimsFromTwoHandlesHaveOneWinner", func(t *testing.T) {
		h := cf.newHarness(t)
		stores := []store.Store{cf.open(t, h, nil), cf.open(t, h, nil)}
		rec := saveCall(t, stores[0], newCall(callA))
		if _, err := stores[0].ApproveCallApproval(ctx, rec.ID, "admin"); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range 2 {
			wg.Go(func() { _, errs[i] = stores[i].ClaimCallApproval(ctx, rec.ID) })
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, store.ErrConflict):
				t.Errorf("losing claim: %v, want ErrConflict", err)
			}
		}
		if won != 1 {
			t.Fatalf("%d claims won (%v), want exactly one", won, errs)
		}
		if got := callAuditOf(t, stores[1], rec.ID); len(got) != 3 {
			t.Fatalf("audit %q, want request, approve and one claim", got)
		}
	})
}

// testReopen checks that what a store committed is there after a restart.
func (cf conformance) testReopen(t *testing.T) {
	ctx := context.Background()
	h := cf.newHarness(t)
	clk := &clock{t: t0}
	s := cf.open(t, h, clk)
	id := enqueue(t, s, "job/1")
	mode, err := s.SetConversationMode(ctx, "room", "t", store.ModeAuto, "admin")
	if err != nil {
		t.Fatal(err)
	}
	ap := save(t, s, newApproval("t1", "make test"))
	op, err := s.CreateOperator(ctx, store.NewOperator{Name: "ann", Role: store.RoleAdmin, Digest: [32]byte{1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = cf.open(t, h, clk)
	if got := pendingKeys(t, s, 0, 10); !reflect.DeepEqual(got, []string{"job/1"}) {
		t.Errorf("pending after reopen %v", got)
	}
	if got, err := s.ConversationMode(ctx, "room", "t"); err != nil || got != mode {
		t.Errorf("mode after reopen %+v, %v; want %+v", got, err, mode)
	}
	if got, err := s.Approval(ctx, ap.ID); err != nil || !reflect.DeepEqual(got, ap) {
		t.Errorf("approval after reopen %+v, %v; want %+v", got, err, ap)
	}
	if got, err := s.ListOperators(ctx); err != nil || !reflect.DeepEqual(got, []store.Operator{op}) {
		t.Errorf("operators after reopen %+v, %v; want %+v", got, err, op)
	}
	// Ids are never reused across a restart.
	if next := enqueue(t, s, "job/2"); next <= id {
		t.Errorf("id %d after reopen, not above %d", next, id)
	}
}
