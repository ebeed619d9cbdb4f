package memory_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/memory"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)

// update runs f in one transaction of d and fails the test when it fails.
func update(t *testing.T, d store.Driver, f func(tx store.Tx) error) {
	t.Helper()
	if err := d.Update(context.Background(), f); err != nil {
		t.Fatal(err)
	}
}

// TestValuesAreCopiedInAndOut writes records holding slices and a pointer, then changes the
// caller's copies, before the write and after a read: what the store reads back stays as
// written.
func TestValuesAreCopiedInAndOut(t *testing.T) {
	ctx := context.Background()
	d := memory.New()
	defer d.Close()
	checkpoint := []byte("bash -c true")
	detail := json.RawMessage(`{"a":1}`)
	exit := 3
	masked := json.RawMessage(`{"command":"ls"}`)
	draft := json.RawMessage(`{"q":{"values":["a"],"custom":""}}`)
	steps := json.RawMessage(`[{"id":"a"}]`)
	var ids struct{ job, approval, prompt, question int64 }
	update(t, d, func(tx store.Tx) (err error) {
		if _, _, err = tx.InsertContinuation(ctx, store.NewContinuation{IdempotencyKey: "k", Channel: "room", Text: "x", Checkpoint: checkpoint}, t0); err != nil {
			return err
		}
		if _, err = tx.QueueAudit(ctx, store.NewAuditEntry{Actor: "a", Action: "b", Detail: detail}, t0)(); err != nil {
			return err
		}
		if ids.job, err = tx.InsertJob(ctx, store.Job{NewJob: store.NewJob{Kind: "command", Command: "make", Channel: "room"},
			Status: store.JobFinished, LogPath: "/logs/1.log", CreatedAt: t0, EndedAt: t0, JobResult: store.JobResult{ExitCode: &exit}}); err != nil {
			return err
		}
		ap := store.Approval{NewApproval: store.NewApproval{Kind: "command", Channel: "room", Command: "make", Workdir: "/w"},
			Status: store.ApprovalPending, CreatedAt: t0}
		if ids.approval, _, err = tx.InsertApproval(ctx, ap); err != nil {
			return err
		}
		if _, err = tx.InsertApprovalComment(ctx, ids.approval, store.ApprovalPending, store.ApprovalComment{Actor: "bob", Text: "first", At: t0}); err != nil {
			return err
		}
		if ids.prompt, err = tx.InsertPrompt(ctx, store.Prompt{Kind: store.PromptPermission, Channel: "room", ToolName: "Bash",
			MaskedInput: masked, Status: store.PromptPending, CreatedAt: t0, Deadline: t0}); err != nil {
			return err
		}
		if ids.question, _, err = tx.InsertQuestionRequest(ctx, "", store.QuestionRequest{Channel: "room", Thread: "t", Requester: "@a",
			Title: "A", Questions: json.RawMessage(`[]`), Status: store.QuestionPending, Revision: 1, Draft: draft, CreatedAt: t0, UpdatedAt: t0}); err != nil {
			return err
		}
		return tx.PutProgress(ctx, store.ProgressSnapshot{ResponseID: "r", Channel: "room", Title: "P", Steps: steps, UpdatedAt: t0})
	})
	for _, b := range [][]byte{checkpoint, detail, masked, draft, steps} {
		b[0] = 'X'
	}
	exit = 9

	// read returns, for each record, the value that must stay as written and a function
	// that scribbles over the copy it was handed.
	read := func() (got []string, scribble []func()) {
		cs, _ := d.PendingContinuations(ctx, 0, 0)
		audit, _ := d.ListAudit(ctx, store.AuditFilter{})
		job, _ := d.Job(ctx, ids.job)
		ap, _ := d.Approval(ctx, ids.approval)
		pr, _ := d.Prompt(ctx, ids.prompt)
		q, _ := d.QuestionRequest(ctx, ids.question)
		ps, _ := d.ListProgress(ctx, store.ProgressFilter{})
		if len(cs) != 1 || len(audit) != 1 || len(ap.Comments) != 1 || len(ps) != 1 || job.ExitCode == nil {
			t.Fatalf("records missing: %+v %+v %+v %+v %+v", cs, audit, job, ap, ps)
		}
		got = []string{string(cs[0].Checkpoint), string(audit[0].Detail), string(pr.MaskedInput), string(q.Draft),
			string(ps[0].Steps), ap.Comments[0].Text, string(rune('0' + *job.ExitCode))}
		scribble = []func(){
			func() { cs[0].Checkpoint[0] = 'Y' }, func() { audit[0].Detail[0] = 'Y' }, func() { pr.MaskedInput[0] = 'Y' },
			func() { q.Draft[0] = 'Y' }, func() { ps[0].Steps[0] = 'Y' }, func() { ap.Comments[0].Text = "changed" },
			func() { *job.ExitCode = 7 },
		}
		return got, scribble
	}
	want := []string{"bash -c true", `{"a":1}`, `{"command":"ls"}`, `{"q":{"values":["a"],"custom":""}}`, `[{"id":"a"}]`, "first", "3"}
	got, scribble := read()
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("read %d = %q, want %q: the store kept the caller's memory", i, got[i], want[i])
		}
		scribble[i]()
	}
	got, _ = read()
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("read %d again = %q, want %q: the store handed out its own memory", i, got[i], want[i])
		}
	}
}

// TestAPanickingTransactionKeepsNothing checks that a transaction whose f panics is rolled
// back and releases the lock: the next transaction runs and sees none of its writes.
func TestAPanickingTransactionKeepsNothing(t *testing.T) {
	ctx := context.Background()
	d := memory.New()
	defer d.Close()
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the panic did not reach Update's caller")
			}
		}()
		_ = d.Update(ctx, func(tx store.Tx) error {
			if _, _, err := tx.InsertContinuation(ctx, store.NewContinuation{IdempotencyKey: "k", Channel: "room", Text: "x"}, t0); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	var id int64
	update(t, d, func(tx store.Tx) (err error) {
		id, _, err = tx.InsertContinuation(ctx, store.NewContinuation{IdempotencyKey: "k", Channel: "room", Text: "again"}, t0)
		return err
	})
	cs, err := d.PendingContinuations(ctx, 0, 0)
	if err != nil || len(cs) != 1 || cs[0].Text != "again" || id != 1 {
		t.Fatalf("after the panic: %+v, %v (id %d); want only the second continuation, id 1", cs, err, id)
	}
}

// TestClosingADriverKeepsTheDatabase checks that a closed driver refuses transactions while
// the database keeps its records for the next driver.
func TestClosingADriverKeepsTheDatabase(t *testing.T) {
	ctx := context.Background()
	db := memory.NewDatabase()
	d := db.Open()
	update(t, d, func(tx store.Tx) error {
		_, _, err := tx.InsertContinuation(ctx, store.NewContinuation{IdempotencyKey: "k", Channel: "room", Text: "x"}, t0)
		return err
	})
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	called := false
	err := d.Update(ctx, func(store.Tx) error { called = true; return nil })
	if err == nil || called || err.Error() != "store: the driver is closed" {
		t.Fatalf("Update on a closed driver = %v (f called: %v), want the closed error", err, called)
	}
	cs, err := db.Open().PendingContinuations(ctx, 0, 0)
	if err != nil || len(cs) != 1 {
		t.Fatalf("a new driver reads %+v, %v; want the committed continuation", cs, err)
	}
}

// TestOperatorsStampCountsCommittedChanges checks that the stamp changes with each operator
// created or removed, and not with a read or a refused create.
func TestOperatorsStampCountsCommittedChanges(t *testing.T) {
	ctx := context.Background()
	s := memory.Open(memory.Options{})
	defer s.Close()
	before := s.OperatorsStamp()
	if _, err := s.CreateOperator(ctx, store.NewOperator{Name: "ann", Role: store.RoleAdmin, Digest: [32]byte{1}}); err != nil {
		t.Fatal(err)
	}
	if got := s.OperatorsStamp(); got != before+1 {
		t.Fatalf("stamp after a create = %d, want %d", got, before+1)
	}
	if _, err := s.ListOperators(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateOperator(ctx, store.NewOperator{Name: "bob", Role: store.RoleAdmin, Digest: [32]byte{1}}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("a second operator with ann's digest: %v, want ErrExists", err)
	}
	if got := s.OperatorsStamp(); got != before+1 {
		t.Fatalf("stamp after a read and a refused create = %d, want %d", got, before+1)
	}
	if err := s.RemoveOperator(ctx, "ann"); err != nil {
		t.Fatal(err)
	}
	if got := s.OperatorsStamp(); got != before+2 {
		t.Fatalf("stamp after a removal = %d, want %d", got, before+2)
	}
}

// TestARolledBackTransactionLeavesNoIndexEntry writes, in a transaction that fails, a record
// of each kind the unique rules and the running jobs index: none of them is found afterwards,
// so the same records insert again as new, under the same ids.
func TestARolledBackTransactionLeavesNoIndexEntry(t *testing.T) {
	ctx := context.Background()
	d := memory.New()
	defer d.Close()
	ap := store.Approval{NewApproval: store.NewApproval{Kind: "command", Channel: "room", Command: "make", Workdir: "/w"},
		Status: store.ApprovalPending, CreatedAt: t0}
	ap.Key = ap.NewApproval.Key()
	q := store.QuestionRequest{Channel: "room", Thread: "t", Requester: "@a", Title: "A", Questions: json.RawMessage(`[]`),
		Status: store.QuestionPending, Revision: 1, Draft: json.RawMessage(`{}`), CreatedAt: t0, UpdatedAt: t0}
	call := store.CallApproval{NewCallApproval: store.NewCallApproval{CallID: "c1", ResponseID: "r1", Agent: "a"},
		Status: store.CallApprovalWaiting, CreatedAt: t0}
	job := store.Job{NewJob: store.NewJob{Kind: "command", Command: "make", Channel: "room"}, Status: store.JobRunning,
		LogPath: "/logs", CreatedAt: t0}
	op := store.Operator{Name: "ann", Role: store.RoleAdmin, CreatedAt: t0}
	insertAll := func(tx store.Tx) (created []bool, err error) {
		var made bool
		if _, made, err = tx.InsertContinuation(ctx, store.NewContinuation{IdempotencyKey: "k", Channel: "room", Text: "x"}, t0); err != nil {
			return nil, err
		}
		created = append(created, made)
		if _, made, err = tx.InsertApproval(ctx, ap); err != nil {
			return nil, err
		}
		created = append(created, made)
		if _, made, err = tx.InsertQuestionRequest(ctx, "", q); err != nil {
			return nil, err
		}
		created = append(created, made)
		if _, err = tx.InsertCallApproval(ctx, call); err != nil {
			return nil, err
		}
		if err = tx.InsertOperator(ctx, op); err != nil {
			return nil, err
		}
		id, err := tx.InsertJob(ctx, job)
		if err != nil {
			return nil, err
		}
		return append(created, id == 1), nil
	}
	boom := errors.New("boom")
	if err := d.Update(ctx, func(tx store.Tx) error {
		if _, err := insertAll(tx); err != nil {
			return err
		}
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("Update = %v, want f's error", err)
	}
	if running, err := d.ListJobs(ctx, store.JobRunning); err != nil || len(running) != 0 {
		t.Fatalf("running after the rollback: %+v, %v; want none", running, err)
	}
	update(t, d, func(tx store.Tx) error {
		created, err := insertAll(tx)
		if err != nil {
			return err
		}
		if want := []bool{true, true, true, true}; !slices.Equal(created, want) {
			t.Errorf("created (continuation, approval, question, job id 1) = %v, want %v", created, want)
		}
		return nil
	})
	running, err := d.ListJobs(ctx, store.JobRunning)
	if err != nil || len(running) != 1 || running[0].ID != 1 {
		t.Fatalf("running: %+v, %v; want job 1", running, err)
	}
}
