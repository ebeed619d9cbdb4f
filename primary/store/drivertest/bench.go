package drivertest

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// DriverOpener opens a driver over fresh, empty storage for one benchmark; the store built
// over it closes it.
type DriverOpener func(b *testing.B) store.Driver

// RunBenchmarks measures the store's hot paths, through store.Portable, over the drivers open
// opens: each a full method call, its transaction and commit included, as the primary makes
// it. Every driver runs them from its own tests, so the numbers compare databases on one
// machine.
func RunBenchmarks(b *testing.B, open DriverOpener) {
	for _, bc := range []struct {
		name string
		run  func(*testing.B, store.Driver, store.Store)
	}{
		{"SaveAndBeginApproval", benchSaveAndBeginApproval},
		{"CreateAndFinishJob", benchCreateAndFinishJob},
		{"CreateAndFinishJob16Writers", benchCreateAndFinishJobConcurrently},
		{"EnqueueAndAckContinuation", benchEnqueueAndAckContinuation},
		{"ListApprovalsPage", benchListApprovalsPage},
		{"ReadOneApproval", benchReadOneApproval},
	} {
		b.Run(bc.name, func(b *testing.B) {
			d := open(b)
			s := store.New(d, store.Options{})
			b.Cleanup(func() {
				if err := s.Close(); err != nil {
					b.Errorf("Close: %v", err)
				}
			})
			b.ReportAllocs()
			bc.run(b, d, s)
		})
	}
}

// benchSaveAndBeginApproval saves a new approval and approves it: an exact command's way to
// running.
func benchSaveAndBeginApproval(b *testing.B, _ store.Driver, s store.Store) {
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		ap, created, err := s.SaveApproval(ctx, newApproval("t1", "make test-"+strconv.Itoa(i)))
		if err != nil || !created {
			b.Fatalf("save: created %v, %v", created, err)
		}
		if _, err := s.BeginApproval(ctx, ap.ID, "admin"); err != nil {
			b.Fatal(err)
		}
	}
}

// benchCreateAndFinishJob creates a job and finishes it with its continuation: a background
// job's life in the store.
func benchCreateAndFinishJob(b *testing.B, _ store.Driver, s store.Store) {
	ctx := context.Background()
	code := 0
	for b.Loop() {
		j, err := s.CreateJob(ctx, newJob("t1"), store.JobCaps{Total: 64, PerThread: 16})
		if err != nil {
			b.Fatal(err)
		}
		finished, created, err := s.FinishJob(ctx, j.ID, store.JobResult{Outcome: "success", ExitCode: &code, Tail: "ok\n"}, cont(j.ID))
		if err != nil || !finished || !created {
			b.Fatalf("finish: finished %v, created %v, %v", finished, created, err)
		}
	}
}

// benchCreateAndFinishJobConcurrently is benchCreateAndFinishJob from 16 writers at once per
// core: jobs ending together, where a driver may share commits among writers.
func benchCreateAndFinishJobConcurrently(b *testing.B, _ store.Driver, s store.Store) {
	ctx := context.Background()
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		code := 0
		for pb.Next() {
			j, err := s.CreateJob(ctx, newJob("t1"), store.JobCaps{})
			if err != nil {
				b.Error(err)
				return
			}
			if _, _, err := s.FinishJob(ctx, j.ID, store.JobResult{Outcome: "success", ExitCode: &code, Tail: "ok\n"}, cont(j.ID)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// benchEnqueueAndAckContinuation enqueues a continuation, counts its delivery and acknowledges
// it: one event through the outbox.
func benchEnqueueAndAckContinuation(b *testing.B, _ store.Driver, s store.Store) {
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		id, created, err := s.EnqueueContinuation(ctx, store.NewContinuation{
			IdempotencyKey: "bench/" + strconv.Itoa(i), Channel: "room", Thread: "t1", Text: "resume",
		})
		if err != nil || !created {
			b.Fatalf("enqueue: created %v, %v", created, err)
		}
		if _, pending, err := s.RecordContinuationDelivery(ctx, id); err != nil || !pending {
			b.Fatalf("delivery: pending %v, %v", pending, err)
		}
		if err := s.AckContinuation(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
}

// listedApprovals is how many approvals the read benchmarks store: four threads, half of each
// thread's approvals denied, so the list's filter (pending, one thread) matches one in eight.
const listedApprovals = 2000

// benchListApprovalsPage reads the newest page of a conversation's pending approvals among
// many: the dashboard's approvals view.
func benchListApprovalsPage(b *testing.B, d store.Driver, s store.Store) {
	ctx := context.Background()
	fillApprovals(b, d, listedApprovals)
	f := store.ApprovalFilter{Status: store.ApprovalPending, Channel: "room", Thread: "t1", Limit: 50}
	for b.Loop() {
		page, err := s.ListApprovals(ctx, f)
		if err != nil || len(page) != f.Limit {
			b.Fatalf("page of %d approvals, %v; want %d", len(page), err, f.Limit)
		}
	}
}

// benchReadOneApproval reads one approval by id among many: the floor of a read.
func benchReadOneApproval(b *testing.B, d store.Driver, s store.Store) {
	ctx := context.Background()
	fillApprovals(b, d, listedApprovals)
	for i := int64(0); b.Loop(); i++ {
		if _, err := s.Approval(ctx, 1+i%listedApprovals); err != nil {
			b.Fatal(err)
		}
	}
}

// fillApprovals stores n approvals in one transaction of d, before the measured loop: four
// threads (t0…t3) in turn, each thread's approvals pending and denied in turn.
func fillApprovals(b *testing.B, d store.Driver, n int) {
	b.Helper()
	at := time.Now().UTC()
	err := d.Update(context.Background(), func(tx store.Tx) error {
		for i := range n {
			a := store.Approval{NewApproval: newApproval(fmt.Sprintf("t%d", i%4), "make test-"+strconv.Itoa(i)),
				Status: store.ApprovalPending, CreatedAt: at}
			a.Key = a.NewApproval.Key()
			if (i/4)%2 == 1 {
				a.Status, a.DecidedBy, a.DecidedAt, a.SettledAt, a.Note = store.ApprovalDenied, "admin", at, at, "no"
			}
			if _, created, err := tx.InsertApproval(context.Background(), a); err != nil || !created {
				return fmt.Errorf("approval %d: created %v, %w", i, created, err)
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
