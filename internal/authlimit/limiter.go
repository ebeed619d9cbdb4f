package authlimit

import (
	"container/list"
	"errors"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/turncli/turncli/internal/clock"
)

// Defaults of Config's optional fields: ten refusals at once, then one more every six seconds
// (a person who mistypes never meets the limit), for up to 4096 addresses at once.
const (
	DefaultBurst    = 10
	DefaultEvery    = 6 * time.Second
	DefaultMaxAddrs = 4096
)

// Config sets the limit.
type Config struct {
	// Burst is how many refusals an address may have at once before it is limited; 0 means
	// DefaultBurst.
	Burst int
	// Every is how often an address earns one more refusal; 0 means DefaultEvery.
	Every time.Duration
	// MaxAddrs bounds the addresses tracked at once; 0 means DefaultMaxAddrs.
	MaxAddrs int
	// Clock; nil means clock.System.
	Clock clock.Clock
	// Logger hears of limited addresses; nil discards.
	Logger *slog.Logger
}

// Validate reports a negative limit.
func (c Config) Validate() error {
	if c.Burst < 0 || c.Every < 0 || c.MaxAddrs < 0 {
		return errors.New("authlimit: limits must not be negative")
	}
	return nil
}

// Limiter counts refused credentials per remote address. It is safe for concurrent use.
type Limiter struct {
	burst  int
	every  time.Duration
	window time.Duration // burst × every: an empty bucket is full again after it
	max    int
	now    func() time.Time
	log    *slog.Logger

	mu       sync.Mutex
	table    map[netip.Prefix]*list.Element // of *entry
	recent   *list.List                     // the table's entries, the most recently refused first
	overflow entry                          // shared by the addresses that found the table full
}

// entry is one address's bucket, kept as the time it is full again (the "theoretical arrival
// time" of GCRA): each refusal moves it Every later, and it may run at most Burst × Every
// ahead of now.
type entry struct {
	key     netip.Prefix
	full    time.Time
	logged  time.Time // when this address was last logged as limited
	limited int       // refusals answered "too many" since then
}

// New returns a limiter.
func New(cfg Config) (*Limiter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Burst == 0 {
		cfg.Burst = DefaultBurst
	}
	if cfg.Every == 0 {
		cfg.Every = DefaultEvery
	}
	if cfg.MaxAddrs == 0 {
		cfg.MaxAddrs = DefaultMaxAddrs
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Limiter{
		burst: cfg.Burst, every: cfg.Every, window: time.Duration(cfg.Burst) * cfg.Every, max: cfg.MaxAddrs,
		now: cfg.Clock.Now, log: cfg.Logger, table: make(map[netip.Prefix]*list.Element), recent: list.New(),
	}, nil
}

// Fail counts one refused credential from addr. While addr is within its limit it returns
// limited false, and the caller answers as it would without a limiter; past it, retry is how
// long until addr is within it again, and the caller answers "too many" instead.
func (l *Limiter) Fail(addr netip.Addr) (retry time.Duration, limited bool) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dropIdle(now)
	e := l.lookup(keyOf(addr))
	next := e.full
	if next.Before(now) {
		next = now
	}
	next = next.Add(l.every)
	if over := next.Sub(now) - l.window; over > 0 {
		e.limited++
		if e.logged.IsZero() || now.Sub(e.logged) >= l.window {
			l.log.Warn("refused credentials limited", "addr", e.name(), "limited", e.limited, "retry_after", over)
			e.logged, e.limited = now, 0
		}
		return over, true
	}
	e.full = next
	return 0, false
}

// lookup returns key's entry, adding one when the table has room. Called with l.mu held.
func (l *Limiter) lookup(key netip.Prefix) *entry {
	if el, ok := l.table[key]; ok {
		l.recent.MoveToFront(el)
		return el.Value.(*entry)
	}
	if len(l.table) >= l.max {
		return &l.overflow
	}
	e := &entry{key: key}
	l.table[key] = l.recent.PushFront(e)
	return e
}

// dropIdle drops the least recently refused entries whose buckets are full again: forgetting
// them changes no answer. When the oldest is still busy, every entry was refused within the
// last window, and a new address goes to the overflow bucket. Called with l.mu held.
func (l *Limiter) dropIdle(now time.Time) {
	for el := l.recent.Back(); el != nil; el = l.recent.Back() {
		e := el.Value.(*entry)
		if e.full.After(now) {
			return
		}
		l.recent.Remove(el)
		delete(l.table, e.key)
	}
}

// keyOf is the address a bucket is kept for: an IPv4 address, or an IPv6 address's /64.
func keyOf(addr netip.Addr) netip.Prefix {
	addr = addr.Unmap().WithZone("")
	bits := 64
	if addr.Is4() {
		bits = 32
	}
	p, _ := addr.Prefix(bits) // fails only for an invalid address: those share the zero key
	return p
}

// name is how the log names the entry's address.
func (e *entry) name() string {
	switch {
	case e.key == netip.Prefix{}:
		return "(untracked addresses)"
	case e.key.IsSingleIP():
		return e.key.Addr().String()
	}
	return e.key.String()
}
