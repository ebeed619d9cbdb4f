package worker

import (
	"log/slog"
	"time"
)

// outage keeps the log of a lost primary to what a person needs: one warning when the
// connection is lost (or cannot be made), each further retry of the same outage at debug,
// and one line when the worker is connected again saying how long it was cut off. The
// connect loop alone uses it, one attempt at a time.
type outage struct {
	log *slog.Logger
	// failures counts the failed attempts since the worker was last connected; began is
	// when the first of them failed.
	failures int
	began    time.Time
	// welcomed: the worker has been connected at least once, so a failure ends a
	// connection rather than fails to make the first.
	welcomed bool
}

// failed records a failed attempt and the wait before the next.
func (o *outage) failed(err error, wait time.Duration) {
	o.failures++
	switch {
	case o.failures > 1:
		o.log.Debug("still cannot reach the primary", "err", err, "attempt", o.failures, "retry_in", wait)
		return
	case o.welcomed:
		o.log.Warn("connection to primary ended", "err", err, "retry_in", wait)
	default:
		o.log.Warn("cannot reach the primary", "err", err, "retry_in", wait)
	}
	o.began = time.Now()
}

// connected records a welcome and returns the attributes its log line adds: how long the
// worker was cut off and how many attempts failed, when it was.
func (o *outage) connected() []any {
	var attrs []any
	if o.failures > 0 {
		attrs = []any{"reconnected_after", time.Since(o.began).Round(time.Millisecond), "failed_attempts", o.failures}
	}
	o.failures, o.welcomed = 0, true
	return attrs
}
