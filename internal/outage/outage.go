// Package outage keeps the log of a lost primary to what a person needs: one warning when the
// connection is lost (or cannot be made), each further retry of the same outage at debug, and
// the time it lasted on the line that says the connection is back. Workers and tool hosts,
// which both reconnect to the primary for as long as they run, log their outages through it.
package outage

import (
	"log/slog"
	"time"
)

// Log is the outage log of one connect loop, which alone uses it, one attempt at a time.
type Log struct {
	log *slog.Logger
	// failures counts the failed attempts since the loop was last connected; began is when
	// the first of them failed.
	failures int
	began    time.Time
	// welcomed: the loop has been connected at least once, so a failure ends a connection
	// rather than fails to make the first.
	welcomed bool
}

// New returns the outage log of a connect loop that logs to log.
func New(log *slog.Logger) *Log { return &Log{log: log} }

// Failed records a failed attempt and the wait before the next.
func (o *Log) Failed(err error, wait time.Duration) {
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

// Connected records a welcome and returns the attributes the "connected" line adds: how long
// the loop was cut off and how many attempts failed, when it was.
func (o *Log) Connected() []any {
	var attrs []any
	if o.failures > 0 {
		attrs = []any{"reconnected_after", time.Since(o.began).Round(time.Millisecond), "failed_attempts", o.failures}
	}
	o.failures, o.welcomed = 0, true
	return attrs
}
