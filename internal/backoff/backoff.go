// Package backoff paces the retries of the processes that keep a connection to the primary
// (workers, tool hosts) and of the MCP servers the primary restarts: a delay that doubles
// from a minimum to a maximum, reset once an attempt made progress, and no retry at all for
// an error that retrying cannot cure.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Policy bounds the delays between attempts.
type Policy struct {
	Min, Max time.Duration
}

// Delay is the wait after failures consecutive failures (1 or more): Min, doubling with each
// further failure, never above Max.
func (p Policy) Delay(failures int) time.Duration {
	d := p.Min
	for i := 1; i < failures && d < p.Max; i++ {
		d *= 2
	}
	return min(d, p.Max)
}

// Attempt is one try: it reports whether it made progress before it ended (a connection
// that was accepted, say), which resets the delay to Min.
type Attempt func(ctx context.Context) (progressed bool, err error)

// Loop runs attempt until ctx ends (it returns nil) or an attempt fails with an error
// permanent reports (it returns that error). Between attempts it waits a random duration in
// [Delay/2, Delay], so that many clients that lost the same server do not return to it in
// the same instant; onRetry, when not nil, hears of each failure and the wait chosen.
func (p Policy) Loop(ctx context.Context, attempt Attempt, permanent func(error) bool, onRetry func(err error, wait time.Duration)) error {
	failures := 0
	for ctx.Err() == nil {
		progressed, err := attempt(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if permanent != nil && permanent(err) {
			return err
		}
		if progressed {
			failures = 0
		}
		failures++
		d := p.Delay(failures)
		wait := d/2 + rand.N(d/2+1)
		if onRetry != nil {
			onRetry(err, wait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
	return nil
}
