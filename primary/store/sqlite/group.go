package sqlite

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// maxGroup bounds how many transactions share one commit, so that a long queue cannot make
// one transaction, and the lock it holds, arbitrarily long.
const maxGroup = 64

// Group commit. SQLite has one writer and syncs the log at every commit, and the sync is most
// of a short transaction's time. Transactions that queue while another runs are run together
// when the writer is free: one after another in one SQLite transaction, each in a savepoint of
// its own, then one COMMIT, so a burst of writers (jobs ending at once, a flurry of decisions)
// pays one sync instead of one each. A transaction alone in its group runs exactly as it would
// ungrouped. Each transaction still sees the writes of those before it and none after it, as
// if they had run one at a time; one that fails is rolled back to its savepoint, leaving the
// others; a COMMIT that fails fails every transaction of the group.

// queuedTx is a transaction waiting for a group.
type queuedTx struct {
	ctx  context.Context
	f    func(preparedTx) error
	done chan txResult // buffered: the runner never waits for the caller
}

// txResult is how a transaction ended: its error, or the value it panicked with, which the
// caller panics with again in its own goroutine.
type txResult struct {
	err      error
	panicked any
}

// transact runs f in a write transaction, committed when f returns nil, possibly together with
// others (see Group commit). It waits as long as ctx allows; a transaction that has begun to
// run is waited for whatever ctx says.
func (w *writer) transact(ctx context.Context, f func(preparedTx) error) error {
	q := &queuedTx{ctx: ctx, f: f, done: make(chan txResult, 1)}
	w.mu.Lock()
	w.queued = append(w.queued, q)
	w.mu.Unlock()
	for {
		select {
		case r := <-q.done:
			return r.result()
		case w.turn <- struct{}{}:
			w.runGroup()
			<-w.turn
		case <-ctx.Done():
			if w.withdraw(q) {
				return fmt.Errorf("store: begin: %w", ctx.Err())
			}
			return (<-q.done).result()
		}
	}
}

// succeeded: the function returned nil (its writes still wait for the group's commit).
func (r txResult) succeeded() bool { return r.err == nil && r.panicked == nil }

func (r txResult) result() error {
	if r.panicked != nil {
		panic(r.panicked)
	}
	return r.err
}

// withdraw takes q out of the queue; false when a group has already taken it.
func (w *writer) withdraw(q *queuedTx) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, other := range w.queued {
		if other == q {
			w.queued = append(w.queued[:i], w.queued[i+1:]...)
			return true
		}
	}
	return false
}

// runGroup runs the queued transactions, up to maxGroup, as one group. Its caller holds turn.
func (w *writer) runGroup() {
	w.mu.Lock()
	n := min(len(w.queued), maxGroup)
	group := make([]*queuedTx, n)
	copy(group, w.queued)
	w.queued = append(w.queued[:0], w.queued[n:]...)
	w.mu.Unlock()
	if n == 0 {
		return
	}
	// The group's own statements run whatever one member's context says: they end what
	// the others began.
	ctx := context.Background()
	if _, err := w.begin.ExecContext(ctx); err != nil {
		for _, q := range group {
			q.done <- txResult{err: fmt.Errorf("store: begin: %w", err)}
		}
		return
	}
	alone := n == 1
	results := make([]txResult, n)
	ran := make([]bool, n) // f returned nil (or, alone, may still commit)
	for i, q := range group {
		if err := q.ctx.Err(); err != nil {
			results[i].err = fmt.Errorf("store: begin: %w", err)
			continue
		}
		if alone {
			results[i] = w.run(q)
			ran[i] = results[i].succeeded()
			continue
		}
		if _, err := w.savepoint.ExecContext(ctx); err != nil {
			w.failGroup(group, results, ran, fmt.Errorf("store: savepoint: %w", err))
			return
		}
		results[i] = w.run(q)
		if results[i].succeeded() {
			ran[i] = true
			_, err := w.release.ExecContext(ctx)
			if err != nil {
				w.failGroup(group, results, ran, fmt.Errorf("store: release: %w", err))
				return
			}
			continue
		}
		// This one's writes are undone; the group goes on. A rollback that finds no
		// transaction means SQLite ended it (as it does on some errors): the group is lost.
		if _, err := w.rollbackTo.ExecContext(ctx); err != nil {
			w.failGroup(group, results, ran, fmt.Errorf("store: rollback: %w", err))
			return
		}
		if _, err := w.release.ExecContext(ctx); err != nil {
			w.failGroup(group, results, ran, fmt.Errorf("store: release: %w", err))
			return
		}
	}
	if !slices.Contains(ran, true) {
		w.end()
	} else if _, err := w.commit.ExecContext(ctx); err != nil {
		w.failGroup(group, results, ran, fmt.Errorf("store: commit: %w", err))
		return
	}
	for i, q := range group {
		q.done <- results[i]
	}
}

// run runs q's function, turning a panic into its result.
func (w *writer) run(q *queuedTx) (r txResult) {
	defer func() {
		if v := recover(); v != nil {
			r = txResult{panicked: v}
		}
	}()
	return txResult{err: q.f(preparedTx{w})}
}

// failGroup ends the group's transaction, keeping nothing, and gives err to every member whose
// function succeeded (the others keep their own failure).
func (w *writer) failGroup(group []*queuedTx, results []txResult, ran []bool, err error) {
	if rbErr := w.end(); rbErr != nil {
		err = errors.Join(err, rbErr)
	}
	for i, q := range group {
		if ran[i] || results[i].succeeded() {
			results[i] = txResult{err: err}
		}
		q.done <- results[i]
	}
}

// end rolls the open transaction back, if SQLite has not ended it already.
func (w *writer) end() error {
	if _, err := w.rollback.ExecContext(context.Background()); err != nil && !isNoTransaction(err) {
		return fmt.Errorf("store: rollback: %w", err)
	}
	return nil
}
