// Package leaderconn keeps a client of the primary (a worker, a tool host) on whichever of
// several primaries leads: active and standby primaries share one store, only the leader
// serves, and a standby answers every call Unavailable, naming the leader when it knows it.
//
// It owns the list of primaries (a comma-separated list of host:port, a name resolving to
// several addresses counting as each of them), one gRPC connection to each, and which one
// calls go to. It does not decide when to retry or how long to wait: the caller's connect
// loop tries the one followed and, when the attempt fails, calls Next and tries again, backing
// off after a whole round (Len attempts) failed.
package leaderconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"
)

// Split returns the addresses of a comma-separated list, blanks dropped.
func Split(list string) []string {
	var out []string
	for a := range strings.SplitSeq(list, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// Conn is a grpc.ClientConnInterface whose calls go to the primary it follows.
type Conn struct {
	addrs []string // as dialled (a name resolving to several: each address)
	conns []*grpc.ClientConn
	cur   atomic.Int64
}

var _ grpc.ClientConnInterface = (*Conn)(nil)

// resolve is the lookup of names in a list; tests replace it.
var resolve = net.DefaultResolver.LookupHost

// New returns a Conn over the primaries of list, following the first. A name that resolves
// to several addresses stands for each of them (dialled by address, with the name as the
// authority TLS verifies); a single address, or a target gRPC resolves itself (scheme:///…),
// is dialled as it is. Nothing connects before the first call.
func New(ctx context.Context, list string, opts ...grpc.DialOption) (*Conn, error) {
	c := &Conn{}
	for _, a := range Split(list) {
		for _, t := range expand(ctx, a) {
			conn, err := grpc.NewClient(t.addr, append(append([]grpc.DialOption(nil), opts...), t.opts...)...)
			if err != nil {
				c.Close()
				return nil, err
			}
			c.addrs, c.conns = append(c.addrs, t.addr), append(c.conns, conn)
		}
	}
	if len(c.conns) == 0 {
		return nil, errors.New("no primary address")
	}
	return c, nil
}

type target struct {
	addr string
	opts []grpc.DialOption
}

func expand(ctx context.Context, a string) []target {
	host, port, err := net.SplitHostPort(a)
	if err != nil || strings.Contains(a, ":///") || net.ParseIP(host) != nil {
		return []target{{addr: a}}
	}
	ips, err := resolve(ctx, host)
	if err != nil || len(ips) < 2 {
		return []target{{addr: a}} // gRPC resolves it (again) when it dials
	}
	out := make([]target, len(ips))
	for i, ip := range ips {
		out[i] = target{addr: net.JoinHostPort(ip, port), opts: []grpc.DialOption{grpc.WithAuthority(a)}}
	}
	return out
}

// Len is how many primaries the Conn knows: the attempts of one round.
func (c *Conn) Len() int { return len(c.conns) }

// Addr is the address of the primary followed.
func (c *Conn) Addr() string { return c.addrs[c.index()] }

func (c *Conn) index() int { return int(c.cur.Load()) % len(c.conns) }

// Next follows another primary after an attempt on the one followed failed with err: the
// leader a standby named, when it is one of the list, else the next in the list.
func (c *Conn) Next(err error) {
	if leader, ok := NamedLeader(err); ok {
		for i, a := range c.addrs {
			if a == leader && i != c.index() {
				c.cur.Store(int64(i))
				return
			}
		}
	}
	c.cur.Store(int64((c.index() + 1) % len(c.conns)))
}

// standbyPrefix begins the message of a standby's Unavailable answers that name the leader.
const standbyPrefix = "standby; leader is "

// StandbyMessage is what a standby answers every call with (status Unavailable): naming the
// leader's address when it knows it (leader not empty).
func StandbyMessage(leader string) string {
	if leader == "" {
		return "standby; no leader yet"
	}
	return standbyPrefix + leader
}

// NamedLeader returns the leader's address a standby's answer names.
func NamedLeader(err error) (string, bool) {
	s, ok := status.FromError(err)
	if !ok || s.Code() != codes.Unavailable || !strings.HasPrefix(s.Message(), standbyPrefix) {
		return "", false
	}
	return strings.TrimPrefix(s.Message(), standbyPrefix), true
}

// Round makes one attempt on each primary in turn, beginning with the one followed, until an
// attempt progresses (a connection the primary accepted), fails with an error final reports,
// or ctx ends, and returns that attempt's result; after each other failure it follows the next
// primary (see Next), telling onNext. When every primary failed it returns the last failure:
// the caller backs off before the next round.
func (c *Conn) Round(ctx context.Context, attempt func(context.Context) (bool, error), final func(error) bool, onNext func(failed string, err error)) (bool, error) {
	var progressed bool
	var err error
	for range c.Len() {
		failed := c.Addr()
		c.redial()
		progressed, err = attempt(ctx)
		if progressed || ctx.Err() != nil || (final != nil && final(err)) {
			return progressed, err
		}
		c.Next(err)
		if onNext != nil && c.Len() > 1 {
			onNext(failed, err)
		}
	}
	return progressed, err
}

// redial makes the primary followed be dialled again now if its last dial failed. Otherwise
// its gRPC connection fails every call at once with that old failure until gRPC's own backoff
// (1 s, growing to 2 minutes) runs out, so a primary back after a restart would wait for it
// whatever pace the caller's loop keeps. The attempt made while this dial runs still fails
// at once; the next one sees its outcome.
func (c *Conn) redial() {
	if conn := c.conns[c.index()]; conn.GetState() == connectivity.TransientFailure {
		conn.ResetConnectBackoff()
	}
}

// Invoke performs a unary call on the primary followed.
func (c *Conn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	return c.conns[c.index()].Invoke(ctx, method, args, reply, opts...)
}

// NewStream begins a stream on the primary followed.
func (c *Conn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return c.conns[c.index()].NewStream(ctx, desc, method, opts...)
}

// Close closes every connection.
func (c *Conn) Close() error {
	var errs []error
	for _, conn := range c.conns {
		errs = append(errs, conn.Close())
	}
	return errors.Join(errs...)
}

// String names the primaries, for logs.
func (c *Conn) String() string { return fmt.Sprintf("%v", c.addrs) }
