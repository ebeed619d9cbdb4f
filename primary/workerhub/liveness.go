package workerhub

import (
	"errors"
	"flag"
	"fmt"
	"time"

	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
)

// Liveness says how the primary tells a worker that stopped answering (frozen, partitioned,
// swapped out) from one that is busy. The gRPC transport's own keepalive notices a dead
// connection; it cannot notice a process that is stopped while its kernel still acknowledges
// the TCP stream, nor one whose message loop is stuck, so the Hub asks the worker's loop
// itself.
type Liveness struct {
	// Interval is how often a connected worker is sent a Ping.
	Interval time.Duration
	// Timeout is how long a worker may send nothing, not even a Pong, before it is taken for
	// gone and its connection ended. It must exceed Interval.
	Timeout time.Duration
	// DeadlineSlack is how long after a command's deadline the primary waits for the worker
	// to show it is alive (a Pong to the Ping sent at the deadline) before it ends the command
	// as timed out itself.
	DeadlineSlack time.Duration
}

// DefaultLiveness suits a worker on the same network as the primary: a stopped worker is gone
// within 15 s, and a command's timeout is kept within half a second.
func DefaultLiveness() Liveness {
	return Liveness{Interval: 5 * time.Second, Timeout: 15 * time.Second, DeadlineSlack: 500 * time.Millisecond}
}

// OrDefaults fills each zero field from DefaultLiveness.
func (l Liveness) OrDefaults() Liveness {
	d := DefaultLiveness()
	if l.Interval == 0 {
		l.Interval = d.Interval
	}
	if l.Timeout == 0 {
		l.Timeout = d.Timeout
	}
	if l.DeadlineSlack == 0 {
		l.DeadlineSlack = d.DeadlineSlack
	}
	return l
}

// Validate reports a setting that cannot work.
func (l Liveness) Validate() error {
	switch {
	case l.Interval < 0 || l.Timeout < 0 || l.DeadlineSlack < 0:
		return errors.New("worker liveness durations must not be negative")
	case l.Timeout != 0 && l.Interval != 0 && l.Timeout <= l.Interval:
		return fmt.Errorf("the worker liveness timeout (%s) must exceed the ping interval (%s)", l.Timeout, l.Interval)
	}
	return nil
}

// BindFlags binds the settings to fs, with DefaultLiveness's values as the flags' defaults.
func (l *Liveness) BindFlags(fs *flag.FlagSet) {
	d := DefaultLiveness()
	fs.DurationVar(&l.Interval, "worker-ping-interval", d.Interval, "how often each worker is pinged")
	fs.DurationVar(&l.Timeout, "worker-liveness-timeout", d.Timeout,
		"a worker that answers nothing for this long is disconnected and its commands fail at once")
	fs.DurationVar(&l.DeadlineSlack, "worker-deadline-slack", d.DeadlineSlack,
		"how long past a command's deadline a silent worker may take before the primary ends the command as timed out")
}

// sinceAccepted is the time since the connection was accepted, on the monotonic clock: the
// unit of conn.heard.
func (c *conn) sinceAccepted() time.Duration { return time.Since(c.since) }

// noteHeard records that the worker sent a message just now.
func (c *conn) noteHeard() { c.heard.Store(int64(c.sinceAccepted())) }

// heardSince reports whether the worker has sent anything since t (a sinceAccepted value).
func (c *conn) heardSince(t time.Duration) bool { return time.Duration(c.heard.Load()) > t }

// ping sends the worker a Ping.
func (c *conn) ping() error {
	return c.send(&workerv1.ConnectResponse{Event: &workerv1.ConnectResponse_Ping{Ping: &workerv1.Ping{Nonce: c.pings.Add(1)}}})
}

// errAway ends the connection of a worker that stopped answering.
var errAway = errors.New("the worker stopped answering")

// watch pings the worker every Interval and returns errAway once it has answered nothing for
// Timeout; it returns nil when done closes. Only workers that answer pings are watched.
func (c *conn) watch(l Liveness, done <-chan struct{}) error {
	t := time.NewTicker(l.Interval)
	defer t.Stop()
	for {
		select {
		case <-done:
			return nil
		case <-t.C:
		}
		if !c.heardSince(c.sinceAccepted() - l.Timeout) {
			return errAway
		}
		// A failed send means the stream is ending; the receive loop reports that.
		_ = c.ping()
	}
}
