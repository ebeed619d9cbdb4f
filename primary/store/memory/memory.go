package memory

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// Options tune a Store; the zero value is ready.
type Options struct {
	// Now is the clock for every timestamp the store writes; time.Now when nil.
	Now func() time.Time
	// ObserveTransaction and ThreadEventsCommitted are the portable store's (see
	// store.Options).
	ObserveTransaction    func(time.Duration, error)
	ThreadEventsCommitted func()
}

// Store is the in-memory store: the portable store over a Driver, which also tells how
// operators changed (store.OperatorChanges). Its methods are safe for concurrent use.
type Store struct {
	*store.Portable
	driver *Driver
}

var (
	_ store.Store           = (*Store)(nil)
	_ store.OperatorChanges = (*Store)(nil)
	_ store.Driver          = (*Driver)(nil)
	_ store.Tx              = (*tx)(nil)
)

// Open returns the store over a new, empty database.
func Open(opts Options) *Store {
	d := New()
	return &Store{Portable: store.New(d, store.Options{
		Now: opts.Now, ObserveTransaction: opts.ObserveTransaction, ThreadEventsCommitted: opts.ThreadEventsCommitted,
	}), driver: d}
}

// OperatorsStamp implements store.OperatorChanges.
func (s *Store) OperatorsStamp() uint64 { return s.driver.OperatorsStamp() }

// Database is the storage drivers share: every record, and the lock that orders their
// transactions. Its zero value is not ready; use NewDatabase.
type Database struct {
	// mu is held exclusively by a transaction for its whole run and shared by reads outside
	// one.
	mu sync.RWMutex
	s  state
	// operatorChanges counts committed creations and removals of operators.
	operatorChanges atomic.Uint64
}

// NewDatabase returns an empty database.
func NewDatabase() *Database {
	db := &Database{}
	db.s.init()
	return db
}

// Open returns a driver on db. Closing it keeps db's records.
func (db *Database) Open() *Driver {
	return &Driver{view: view{s: &db.s, lock: db.mu.RLocker()}, db: db}
}

// New returns a driver on a new, empty database.
func New() *Driver { return NewDatabase().Open() }

// Driver is the in-memory store.Driver: one handle on a Database. Its methods are safe for
// concurrent use.
type Driver struct {
	view   // reads under the database's read lock
	db     *Database
	closed atomic.Bool
}

// errClosed is the failure of a transaction begun on a closed driver.
var errClosed = errors.New("store: the driver is closed")

// Close implements store.Driver. The database keeps its records for other drivers.
func (d *Driver) Close() error {
	d.closed.Store(true)
	return nil
}

// OperatorsStamp is the count of operator changes committed by every driver on the database.
func (d *Driver) OperatorsStamp() uint64 { return d.db.operatorChanges.Load() }

// Update implements store.Driver: f runs holding the database's write lock, so transactions
// run one at a time and f is never run again. When f fails or panics, its writes are undone
// before the lock is released, so no reader ever sees them.
func (d *Driver) Update(ctx context.Context, f func(store.Tx) error) (err error) {
	if d.closed.Load() {
		return errClosed
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	d.db.mu.Lock()
	defer d.db.mu.Unlock()
	t := &tx{view: view{s: &d.db.s, lock: noLock{}}}
	committed := false
	defer func() {
		if !committed {
			t.rollback()
		}
	}()
	if err := f(t); err != nil {
		return err
	}
	if t.unmatched != nil {
		return t.unmatched
	}
	committed = true
	if t.operatorsChanged {
		d.db.operatorChanges.Add(1)
	}
	return nil
}

// tx is one transaction: store.Tx. It reads and writes the state in place, its caller holding
// the write lock, and keeps how to undo each write.
type tx struct {
	view
	undo []func()
	// operatorsChanged: an operator was created or removed; counted once committed.
	operatorsChanged bool
	// unmatched is set by the first queued compare-and-set that found its record in another
	// state, which fails the transaction (store.Tx).
	unmatched error
}

// unmatch fails the transaction with store.ErrUnmatched, saying what was not as expected.
func (t *tx) unmatch(what string) error {
	if t.unmatched == nil {
		t.unmatched = fmt.Errorf("%w: %s", store.ErrUnmatched, what)
	}
	return t.unmatched
}

// onRollback records how to undo a write just made.
func (t *tx) onRollback(f func()) { t.undo = append(t.undo, f) }

// rollback undoes the transaction's writes, newest first.
func (t *tx) rollback() {
	for i := len(t.undo) - 1; i >= 0; i-- {
		t.undo[i]()
	}
	t.undo = nil
}

// view reads the state under lock: the database's read lock on a driver, nothing inside a
// transaction (which holds the write lock).
type view struct {
	s    *state
	lock sync.Locker
}

// read locks the view and returns the function that unlocks it.
func (v view) read() func() {
	v.lock.Lock()
	return v.lock.Unlock
}

type noLock struct{}

func (noLock) Lock()   {}
func (noLock) Unlock() {}

// stamp is t as a driver keeps it: UTC, to the nanosecond, without a monotonic reading; the
// zero time (an unset time, NULL in SQL) stays zero.
func stamp(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return time.Unix(0, t.UnixNano()).UTC()
}

// limited reports whether a list of n records has reached limit (zero: no limit).
func limited(n, limit int) bool { return limit > 0 && n >= limit }
