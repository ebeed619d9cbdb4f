// Package drivertest is the conformance suite and the benchmarks of store drivers: every
// store.Driver runs RunConformanceTests and RunBenchmarks from its own tests, so the portable
// rules of store.Portable hold the same over every database and its hot paths are measured
// the same way on each. The suite tests the Store built over the driver (round trips,
// not-found, compare-and-set conflicts, list order and paging, concurrent claims, idempotent
// continuations, reopening) and the driver's own contract (transactions roll back, Update
// methods write only from the prior state given).
//
// It does not test what only one database has (a schema, a file, pragmas, migrations): those
// tests stay with the driver.
package drivertest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// Harness opens drivers over one storage made for one test.
type Harness interface {
	// Open opens a driver over the harness's storage. Called again, while earlier drivers are
	// open (two processes on one database) or after they were closed (a restart), it opens
	// the same storage: every driver sees what the others committed. The caller closes it.
	Open(t *testing.T) store.Driver
}

// HarnessMaker makes a harness over fresh, empty storage.
type HarnessMaker func(t *testing.T) Harness

// RunConformanceTests runs the suite against the drivers newHarness's harnesses open.
func RunConformanceTests(t *testing.T, newHarness HarnessMaker) {
	cf := conformance{newHarness: newHarness}
	for _, tc := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"Driver", cf.testDriver},
		{"Reopen", cf.testReopen},
		{"Continuations", cf.testContinuations},
		{"ConversationModes", cf.testConversationModes},
		{"ListConversations", cf.testListConversations},
		{"ShellModes", cf.testShellModes},
		{"Audit", cf.testAudit},
		{"ConcurrentWriters", cf.testConcurrentWriters},
		{"Operators", cf.testOperators},
		{"Jobs", cf.testJobs},
		{"Parking", cf.testParking},
		{"ApprovalKey", cf.testApprovalKey},
		{"SaveApproval", cf.testSaveApproval},
		{"ListApprovals", cf.testListApprovals},
		{"ApprovalDecisions", cf.testApprovalDecisions},
		{"CreateApprovedJob", cf.testCreateApprovedJob},
		{"SettleApproval", cf.testSettleApproval},
		{"RecoverApprovals", cf.testRecoverApprovals},
		{"SaveCallApproval", cf.testSaveCallApproval},
		{"CallApprovalTransitions", cf.testCallApprovalTransitions},
		{"ListCallApprovals", cf.testListCallApprovals},
		{"CallApprovalExpiry", cf.testCallApprovalExpiry},
		{"ContinuationCheckpointRoundTrips", cf.testContinuationCheckpointRoundTrips},
		{"CreatePrompt", cf.testCreatePrompt},
		{"ListPrompts", cf.testListPrompts},
		{"PromptDecisions", cf.testPromptDecisions},
		{"PermissionAllowances", cf.testPermissionAllowances},
		{"ListAndRevokePermissionAllowances", cf.testListAndRevokePermissionAllowances},
		{"SaveQuestionRequest", cf.testSaveQuestionRequest},
		{"QuestionDrafts", cf.testQuestionDrafts},
		{"SubmitQuestionAnswers", cf.testSubmitQuestionAnswers},
		{"CancelQuestionRequests", cf.testCancelQuestionRequests},
		{"ListQuestionRequests", cf.testListQuestionRequests},
		{"Progress", cf.testProgress},
		{"ThreadEvents", cf.testThreadEvents},
		{"ThreadFeedReads", cf.testThreadFeedReads},
		{"IdentityLinks", cf.testIdentityLinks},
		{"SurfaceCards", cf.testSurfaceCards},
		{"Paging", cf.testPaging},
	} {
		t.Run(tc.name, tc.run)
	}
}

type conformance struct{ newHarness HarnessMaker }

// open opens a store over a driver of h (of fresh storage when h is nil) with the clock
// (time.Now when nil), closed at cleanup.
func (cf conformance) open(t *testing.T, h Harness, clk *clock) store.Store {
	t.Helper()
	s, _ := cf.openFaulty(t, h, clk)
	return s
}

// openFaulty is open with a switch that makes the driver's audit writes fail.
func (cf conformance) openFaulty(t *testing.T, h Harness, clk *clock) (store.Store, *atomic.Bool) {
	t.Helper()
	if h == nil {
		h = cf.newHarness(t)
	}
	opts := store.Options{}
	if clk != nil {
		opts.Now = clk.Now
	}
	d := &faultyDriver{Driver: h.Open(t)}
	s := store.New(d, opts)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, &d.failAudit
}

// errInjected is the failure faultyDriver injects.
var errInjected = errors.New("injected audit failure")

// faultyDriver is a real driver whose transactions fail their audit writes while failAudit
// is set: what a transition wrote before its audit entry must then be rolled back.
type faultyDriver struct {
	store.Driver
	failAudit atomic.Bool
}

// Update fails a transaction that queued an audit entry, once f has returned, as the
// database fails the commit of a transaction one of whose queued writes failed.
func (d *faultyDriver) Update(ctx context.Context, f func(store.Tx) error) error {
	return d.Driver.Update(ctx, func(tx store.Tx) error {
		ftx := &faultyTx{Tx: tx, d: d}
		if err := f(ftx); err != nil {
			return err
		}
		if ftx.audited && d.failAudit.Load() {
			return errInjected
		}
		return nil
	})
}

type faultyTx struct {
	store.Tx
	d       *faultyDriver
	audited bool
}

func (tx *faultyTx) QueueAudit(ctx context.Context, e store.NewAuditEntry, at time.Time) func() (int64, error) {
	tx.audited = true
	if tx.d.failAudit.Load() {
		return func() (int64, error) { return 0, errInjected }
	}
	return tx.Tx.QueueAudit(ctx, e, at)
}

// clock is a settable clock for the store.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// t0 has nanoseconds: a driver keeps times to the nanosecond.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
