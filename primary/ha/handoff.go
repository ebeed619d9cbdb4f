package ha

import (
	"errors"
	"net"
	"sync/atomic"
	"time"
)

// handoffListener lends a bound TCP socket to one set of servers at a time: its Close ends
// their Accept (through a deadline) without closing the socket, so the standby's servers give
// the addresses over to the leader's without a moment in which the port is free for another
// process or refuses a client.
type handoffListener struct {
	*net.TCPListener
	closed atomic.Bool
}

// lend returns a listener over l for the next set of servers. The previous one must be closed
// and its Accept returned.
func lend(l *net.TCPListener) (*handoffListener, error) {
	if err := l.SetDeadline(time.Time{}); err != nil {
		return nil, err
	}
	return &handoffListener{TCPListener: l}, nil
}

// Accept returns net.ErrClosed once the listener is closed: servers retry an Accept that timed
// out, and stop only on a closed listener.
func (l *handoffListener) Accept() (net.Conn, error) {
	c, err := l.TCPListener.Accept()
	if l.closed.Load() {
		if c != nil {
			c.Close() // arrived while the servers change; the client dials again
		}
		return nil, net.ErrClosed
	}
	return c, err
}

// Close interrupts Accept and keeps the socket bound.
func (l *handoffListener) Close() error {
	if l.closed.Swap(true) {
		return nil
	}
	return l.SetDeadline(time.Unix(1, 0))
}

// errNotTCP is a listener handoff cannot lend.
var errNotTCP = errors.New("active/standby serving needs TCP listeners")
