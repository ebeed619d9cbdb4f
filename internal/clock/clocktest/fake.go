// Package clocktest provides Fake, the clock tests drive by hand. It is the only fake of
// clock.Clock: tests of grants, prompts, jobs and reaping all use it rather than a clock of
// their own.
package clocktest

import (
	"sync"
	"time"

	"github.com/turncli/turncli/internal/clock"
)

// Fake is a clock.Clock whose time moves only by Advance. Timers and tickers fire during
// Advance, in the order of the times they are due (in the order they were made when due at
// the same time), each with the time it was due; Now reads that time while they fire. Every
// channel holds one value, as the system's do: a tick nobody received is dropped.
//
// It is safe for concurrent use.
type Fake struct {
	mu      sync.Mutex
	changed sync.Cond // broadcast when a timer or ticker becomes pending
	now     time.Time
	made    uint64 // timers and tickers made so far: their order among equal due times
	pending map[*waiter]struct{}
}

var _ clock.Clock = (*Fake)(nil)

// NewFake returns a Fake reading start.
func NewFake(start time.Time) *Fake {
	f := &Fake{now: start, pending: make(map[*waiter]struct{})}
	f.changed.L = &f.mu
	return f
}

// waiter is a pending timer (period zero) or ticker.
type waiter struct {
	f      *Fake
	due    time.Time
	period time.Duration
	order  uint64
	c      chan time.Time
}

// Now returns the fake's time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer implements clock.Clock. A timer for zero or less fires at once.
func (f *Fake) NewTimer(d time.Duration) (clock.Timer, <-chan time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := &waiter{f: f, c: make(chan time.Time, 1)}
	f.schedule(w, d)
	return (*fakeTimer)(w), w.c
}

// NewTicker implements clock.Clock. It panics when d is not positive, as time.NewTicker does.
func (f *Fake) NewTicker(d time.Duration) (clock.Ticker, <-chan time.Time) {
	if d <= 0 {
		panic("clocktest: non-positive interval for NewTicker")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	w := &waiter{f: f, period: d, c: make(chan time.Time, 1)}
	f.schedule(w, d)
	return (*fakeTicker)(w), w.c
}

// Advance moves the time forward by d, firing every timer and tick due meanwhile.
func (f *Fake) Advance(d time.Duration) {
	if d < 0 {
		panic("clocktest: Advance by a negative duration")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	end := f.now.Add(d)
	for {
		w := f.next(end)
		if w == nil {
			break
		}
		f.now = w.due
		send(w.c, w.due)
		if w.period > 0 {
			w.due = w.due.Add(w.period)
		} else {
			delete(f.pending, w)
		}
	}
	f.now = end
}

// Pending reports how many timers and tickers are waiting to fire.
func (f *Fake) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.pending)
}

// WaitForPending blocks until at least n timers and tickers are waiting to fire: a test
// calls it before Advance to know that the code under test has started its timer.
func (f *Fake) WaitForPending(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.pending) < n {
		f.changed.Wait()
	}
}

// next is the earliest waiter due by end, nil when there is none. Called with f.mu held.
func (f *Fake) next(end time.Time) *waiter {
	var first *waiter
	for w := range f.pending {
		if w.due.After(end) {
			continue
		}
		if first == nil || w.due.Before(first.due) || (w.due.Equal(first.due) && w.order < first.order) {
			first = w
		}
	}
	return first
}

// schedule makes w due d from now (at once when d is not positive), dropping any value it
// had sent and nobody received. Called with f.mu held.
func (f *Fake) schedule(w *waiter, d time.Duration) {
	drain(w.c)
	f.made++
	w.order = f.made
	w.due = f.now.Add(d)
	if d <= 0 && w.period == 0 {
		send(w.c, f.now)
		return
	}
	f.pending[w] = struct{}{}
	f.changed.Broadcast()
}

// stop cancels w, reporting whether it was pending. Called with f.mu held.
func (f *Fake) stop(w *waiter) bool {
	_, was := f.pending[w]
	delete(f.pending, w)
	drain(w.c)
	return was
}

func send(c chan time.Time, t time.Time) {
	select {
	case c <- t:
	default:
	}
}

func drain(c chan time.Time) {
	select {
	case <-c:
	default:
	}
}

type fakeTimer waiter

func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	return t.f.stop((*waiter)(t))
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	was := t.f.stop((*waiter)(t))
	t.f.schedule((*waiter)(t), d)
	return was
}

type fakeTicker waiter

func (t *fakeTicker) Stop() {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	t.f.stop((*waiter)(t))
}

func (t *fakeTicker) Reset(d time.Duration) {
	if d <= 0 {
		panic("clocktest: non-positive interval for Ticker.Reset")
	}
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	t.f.stop((*waiter)(t))
	t.period = d
	t.f.schedule((*waiter)(t), d)
}
