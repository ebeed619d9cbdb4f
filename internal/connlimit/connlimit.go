// Package connlimit bounds the connections a process's listeners hold open, per remote address
// and in all, so no one client can use up the process's file descriptors and lock everyone
// else out of its APIs, health checks included. A connection over a limit is accepted, told
// why in its protocol's own words, and closed.
//
// It counts connections; closing idle ones is the servers' part (HTTP idle timeouts, gRPC
// keepalive), and so is authentication.
package connlimit

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"sync"
	"syscall"
	"time"
)

// Config sets the limits.
type Config struct {
	// PerAddress bounds the open connections from one remote IP address, over every listener
	// of the Limiter; on loopback, from one user of this host (see peerKey).
	PerAddress int
	// Total bounds the open connections over every listener of the Limiter.
	Total int
}

// DefaultConfig leaves room for a busy runtime, its workers, operators and hundreds of local
// shells on one address, and keeps the total within three quarters of the descriptors this
// process may open, so the limit is reached, and said, before accept fails for want of them.
func DefaultConfig() Config {
	total := 8192
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil && lim.Cur < uint64(total)*4/3 {
		total = max(int(lim.Cur)*3/4, 64)
	}
	return Config{PerAddress: min(1024, total), Total: total}
}

// ProbeConfig bounds a listener of metrics and health checks: scrapers and probes need few
// connections, and a budget apart from the APIs' keeps a flood of those from starving them.
var ProbeConfig = Config{PerAddress: 32, Total: 128}

// OrDefaults fills each zero field from DefaultConfig.
func (c Config) OrDefaults() Config {
	d := DefaultConfig()
	if c.PerAddress == 0 {
		c.PerAddress = d.PerAddress
	}
	if c.Total == 0 {
		c.Total = d.Total
	}
	return c
}

// Validate reports a limit that cannot work.
func (c Config) Validate() error {
	switch {
	case c.PerAddress < 1 || c.Total < 1:
		return errors.New("connection limits must be at least 1")
	case c.PerAddress > c.Total:
		return fmt.Errorf("the per-address connection limit (%d) is over the total (%d)", c.PerAddress, c.Total)
	}
	return nil
}

// BindFlags binds the limits to fs, with DefaultConfig's values as the flags' defaults.
func (c *Config) BindFlags(fs *flag.FlagSet) {
	d := DefaultConfig()
	fs.IntVar(&c.PerAddress, "max-conns-per-address", d.PerAddress, "most connections open at once from one remote address, over all listeners")
	fs.IntVar(&c.Total, "max-conns", d.Total, "most connections open at once over all listeners")
}

// Limiter counts the open connections of the listeners it wraps.
type Limiter struct {
	cfg Config
	log *slog.Logger

	mu     sync.Mutex
	total  int
	byAddr map[string]int
	// Refusals are logged at most once per logEvery, with how many there were.
	refused    int
	lastLogged time.Time
	// draining counts refused connections still being told why.
	draining int
}

// logEvery spaces the log lines about refused connections: a flood of them is one line.
const logEvery = 10 * time.Second

// maxDraining bounds the refused connections being told why at once; past it they are closed
// without a word, so a flood of refusals cannot hold descriptors either.
const maxDraining = 64

// New returns a Limiter with cfg's limits (zero fields: DefaultConfig's), logging refusals on
// log (nil discards).
func New(cfg Config, log *slog.Logger) *Limiter {
	cfg = cfg.OrDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Limiter{cfg: cfg, log: log, byAddr: make(map[string]int)}
}

// Refusal tells a refused connection why, in its protocol; nil closes it without a word.
type Refusal func(c net.Conn, reason string)

// Wrap returns l with its connections counted; an accepted connection over a limit is handed
// to refuse and never returned by Accept.
func (lim *Limiter) Wrap(l net.Listener, refuse Refusal) net.Listener {
	return &listener{Listener: l, lim: lim, refuse: refuse}
}

// Open returns the connections open now, in all and per peer ("IP", or "IP uid N" on
// loopback).
func (lim *Limiter) Open() (total int, byPeer map[string]int) {
	lim.mu.Lock()
	defer lim.mu.Unlock()
	return lim.total, maps.Clone(lim.byAddr)
}

// admit counts a new connection from addr, or says why it is refused.
func (lim *Limiter) admit(addr string) (ok bool, reason string) {
	lim.mu.Lock()
	defer lim.mu.Unlock()
	switch {
	case lim.byAddr[addr] >= lim.cfg.PerAddress:
		reason = "too many connections from this address"
	case lim.total >= lim.cfg.Total:
		reason = "too many connections"
	default:
		lim.byAddr[addr]++
		lim.total++
		return true, ""
	}
	lim.refused++
	if now := time.Now(); now.Sub(lim.lastLogged) >= logEvery {
		lim.log.Warn("connections refused", "reason", reason, "remote", addr, "refused", lim.refused,
			"open", lim.total, "per_address_limit", lim.cfg.PerAddress, "total_limit", lim.cfg.Total)
		lim.lastLogged, lim.refused = now, 0
	}
	return false, reason
}

func (lim *Limiter) release(addr string) {
	lim.mu.Lock()
	defer lim.mu.Unlock()
	lim.total--
	if lim.byAddr[addr]--; lim.byAddr[addr] <= 0 {
		delete(lim.byAddr, addr)
	}
}

// startDraining reports whether a refused connection may be told why (and counts it).
func (lim *Limiter) startDraining() bool {
	lim.mu.Lock()
	defer lim.mu.Unlock()
	if lim.draining >= maxDraining {
		return false
	}
	lim.draining++
	return true
}

func (lim *Limiter) doneDraining() {
	lim.mu.Lock()
	lim.draining--
	lim.mu.Unlock()
}

type listener struct {
	net.Listener
	lim    *Limiter
	refuse Refusal
}

func (l *listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := peerKey(c)
		if ok, reason := l.lim.admit(addr); ok {
			return &conn{Conn: c, release: sync.OnceFunc(func() { l.lim.release(addr) })}, nil
		} else if l.refuse == nil || !l.lim.startDraining() {
			c.Close()
		} else {
			go func() {
				defer l.lim.doneDraining()
				l.refuse(c, reason)
			}()
		}
	}
}

// conn releases its count once, on its first Close.
type conn struct {
	net.Conn
	release func()
}

func (c *conn) Close() error {
	c.release()
	return c.Conn.Close()
}

// CloseWrite shuts the write side when the connection can (net/http uses it to close
// gracefully).
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Close()
}
