package leader

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Lease is who holds the leader lease.
type Lease struct {
	// Holder is the holder's id, unique per process; empty when nobody holds a live lease.
	Holder string
	// Addr is where the holder serves its gRPC APIs, as others should dial it.
	Addr string
	// Fence is the holder's fencing token: greater than every earlier holder's.
	Fence int64
}

// Held reports whether somebody holds the lease.
func (l Lease) Held() bool { return l.Holder != "" }

// ErrLost is a lease that is no longer the caller's: it expired, or another holder took it.
var ErrLost = errors.New("leader lease lost")

// Backend keeps the lease. Its durations are measured by the backend's own clock.
type Backend interface {
	// Acquire takes the lease for holder, serving at addr, for ttl, with a new fencing token,
	// when nobody holds it or it expired. Otherwise it returns the live lease and false.
	Acquire(ctx context.Context, holder, addr string, ttl time.Duration) (Lease, bool, error)
	// Renew extends the lease l by ttl from now; ErrLost when l is no longer the lease.
	Renew(ctx context.Context, l Lease, ttl time.Duration) error
	// Release ends the lease l at once, so a standby need not wait for it to expire; nothing
	// when l is no longer the lease.
	Release(ctx context.Context, l Lease) error
	// Current returns the live lease, or a zero Lease when none is live.
	Current(ctx context.Context) (Lease, error)
}

// Default lease timings: a standby takes over between TTL and TTL+Renew after the leader
// stopped renewing.
const (
	DefaultTTL   = 3 * time.Second
	DefaultRenew = time.Second
)

// Config is what an Elector needs.
type Config struct {
	Backend Backend
	// Holder identifies this process (unique among the contenders); Addr is where it serves.
	Holder, Addr string
	// TTL is how long a lease lasts unrenewed, Renew how often it is renewed and how often a
	// standby tries to take it (defaults DefaultTTL and DefaultRenew). Renew must be well
	// under TTL so a renewal or two may fail without losing the lease.
	TTL, Renew time.Duration
	Logger     *slog.Logger
}

func (c *Config) validate() error {
	if c.Backend == nil || c.Holder == "" {
		return errors.New("leader: a backend and a holder id are required")
	}
	if c.TTL == 0 {
		c.TTL = DefaultTTL
	}
	if c.Renew == 0 {
		c.Renew = DefaultRenew
	}
	if c.Renew <= 0 || c.TTL < 2*c.Renew {
		return fmt.Errorf("leader: the lease TTL (%v) must be at least twice its renew interval (%v)", c.TTL, c.Renew)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Elector campaigns for the lease and holds it. One Elector serves one term: Campaign, then
// Hold until the lease is lost or the holder stops.
type Elector struct {
	cfg   Config
	lease Lease
	// validUntil is the local end of the lease: TTL after the start of the request that last
	// took or renewed it (a monotonic reading).
	validUntil time.Time
}

// New returns an Elector for cfg.
func New(cfg Config) (*Elector, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Elector{cfg: cfg}, nil
}

// Campaign tries to take the lease every Renew interval until it holds it (it returns the
// lease) or ctx ends. observe, when not nil, hears of the live lease of another holder each
// time it changes, and of the zero Lease when none is live; a failing backend is logged and
// tried again.
func (e *Elector) Campaign(ctx context.Context, observe func(Lease)) (Lease, error) {
	var seen Lease
	first := true
	t := time.NewTicker(e.cfg.Renew)
	defer t.Stop()
	for {
		start := time.Now()
		l, ok, err := e.cfg.Backend.Acquire(ctx, e.cfg.Holder, e.cfg.Addr, e.cfg.TTL)
		switch {
		case err != nil && ctx.Err() == nil:
			e.cfg.Logger.Warn("leader lease: campaign failed", "err", err)
		case ok:
			e.lease, e.validUntil = l, start.Add(e.cfg.TTL)
			e.cfg.Logger.Info("leader lease taken", "fence", l.Fence)
			return l, nil
		case err == nil && (first || l != seen):
			first, seen = false, l
			if l.Held() {
				e.cfg.Logger.Info("standing by", "leader", l.Holder, "leader_addr", l.Addr, "fence", l.Fence)
			}
			if observe != nil {
				observe(l)
			}
		}
		select {
		case <-ctx.Done():
			return Lease{}, ctx.Err()
		case <-t.C:
		}
	}
}

// Hold renews the lease Campaign took every Renew interval until ctx ends (nil) or the lease
// is lost (an error wrapping ErrLost): the backend says it is another's, or no renewal
// succeeded for a whole TTL. When it returns ErrLost the caller must stop acting as leader at
// once.
func (e *Elector) Hold(ctx context.Context) error {
	if !e.lease.Held() {
		return errors.New("leader: Hold before a successful Campaign")
	}
	t := time.NewTicker(e.cfg.Renew)
	defer t.Stop()
	expiry := time.NewTimer(time.Until(e.validUntil))
	defer expiry.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-expiry.C:
			return fmt.Errorf("%w: not renewed for %v", ErrLost, e.cfg.TTL)
		case <-t.C:
		}
		start := time.Now()
		rctx, cancel := context.WithDeadline(ctx, e.validUntil)
		err := e.cfg.Backend.Renew(rctx, e.lease, e.cfg.TTL)
		cancel()
		switch {
		case err == nil:
			e.validUntil = start.Add(e.cfg.TTL)
			expiry.Reset(time.Until(e.validUntil))
		case errors.Is(err, ErrLost):
			return err
		case ctx.Err() != nil:
			return nil
		default:
			e.cfg.Logger.Warn("leader lease: renewal failed", "err", err, "valid_for", time.Until(e.validUntil).Round(time.Millisecond))
		}
	}
}

// Lease is the lease Campaign took.
func (e *Elector) Lease() Lease { return e.lease }

// Release gives the lease up, so a standby takes over without waiting for it to expire. Call
// it only once nothing of this term writes any more.
func (e *Elector) Release(ctx context.Context) error {
	if !e.lease.Held() {
		return nil
	}
	return e.cfg.Backend.Release(ctx, e.lease)
}
