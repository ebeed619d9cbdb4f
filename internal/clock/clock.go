// Package clock is the one source of time for the code that keeps deadlines, expiries and
// periodic sweeps: grants, prompts, jobs and the reaping of responses. Production code uses
// System; tests use clocktest.Fake, which moves only when told to, so that a deadline of a
// day is tested without sleeping.
//
// It owns reading the time and making timers, nothing else: every deadline's length and
// what happens when it passes belong to the package that keeps it.
package clock

import "time"

// Clock tells the time and makes timers and tickers measured by it.
type Clock interface {
	// Now is the current time (time.Now).
	Now() time.Time
	// NewTimer returns a timer that sends the time on its channel once, d from now
	// (time.NewTimer). The channel is returned beside the timer so that Timer can be an
	// interface.
	NewTimer(d time.Duration) (Timer, <-chan time.Time)
	// NewTicker returns a ticker that sends the time on its channel every d, dropping ticks a
	// slow receiver misses (time.NewTicker); d must be positive.
	NewTicker(d time.Duration) (Ticker, <-chan time.Time)
}

// Timer is a timer made by a Clock. As with time.Timer since Go 1.23, no stale time is
// received after Stop or Reset returns.
type Timer interface {
	// Stop prevents the timer from firing; it reports whether it was still pending.
	Stop() bool
	// Reset makes the timer fire d from now; it reports whether it was still pending.
	Reset(d time.Duration) bool
}

// Ticker is a ticker made by a Clock.
type Ticker interface {
	// Stop ends the ticks.
	Stop()
	// Reset makes the ticker tick every d from now on.
	Reset(d time.Duration)
}

// System is the operating system's clock: the package time functions.
var System Clock = system{}

type system struct{}

func (system) Now() time.Time { return time.Now() }

func (system) NewTimer(d time.Duration) (Timer, <-chan time.Time) {
	t := time.NewTimer(d)
	return t, t.C
}

func (system) NewTicker(d time.Duration) (Ticker, <-chan time.Time) {
	t := time.NewTicker(d)
	return t, t.C
}
