package leader

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/turncli/turncli/primary/store/postgres"
)

// Postgres is the Backend in the store's PostgreSQL database (the leader_lease and
// leader_fence tables of the store's schema). It has a small pool of its own, so a store busy
// with writes never delays a renewal. Times are the database's now(): the contenders' clocks
// need not agree.
type Postgres struct {
	pool *pgxpool.Pool
}

var _ Backend = (*Postgres)(nil)

// OpenPostgres connects to the store's database at url, bringing its schema up to date first
// (as opening the store does) so the lease tables exist.
func OpenPostgres(ctx context.Context, url string) (*Postgres, error) {
	d, err := postgres.OpenDriver(ctx, url, postgres.Options{MaxConns: 1})
	if err != nil {
		return nil, err
	}
	d.Close()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, errors.New("leader: the PostgreSQL URL is malformed") // the error may quote the password
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("leader: %w", err)
	}
	return &Postgres{pool: pool}, nil
}

// Close closes the pool.
func (p *Postgres) Close() { p.pool.Close() }

// Acquire takes the lease in one transaction: lock the lease row, check it is free or
// expired, take the next fencing token, write it to leader_fence (which waits for the old
// leader's writes in flight, each holding it FOR SHARE, and refuses every later one), then
// write the lease row.
func (p *Postgres) Acquire(ctx context.Context, holder, addr string, ttl time.Duration) (Lease, bool, error) {
	var l Lease
	var taken bool
	err := pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		var live bool
		if err := tx.QueryRow(ctx, `SELECT holder, addr, fence, expires_at > clock_timestamp() FROM leader_lease WHERE id = 1 FOR UPDATE`).
			Scan(&l.Holder, &l.Addr, &l.Fence, &live); err != nil {
			return fmt.Errorf("leader: read the lease: %w", err)
		}
		if live {
			return nil
		}
		if err := tx.QueryRow(ctx, `SELECT nextval('leader_fence_seq')`).Scan(&l.Fence); err != nil {
			return fmt.Errorf("leader: next fence: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE leader_fence SET fence = $1 WHERE id = 1`, l.Fence); err != nil {
			return fmt.Errorf("leader: write the fence: %w", err)
		}
		// The lease is counted from after the old leader's writes drained (clock_timestamp, not
		// the transaction's start).
		if _, err := tx.Exec(ctx, `UPDATE leader_lease SET holder = $1, addr = $2, fence = $3,
			expires_at = clock_timestamp() + make_interval(secs => $4) WHERE id = 1`,
			holder, addr, l.Fence, ttl.Seconds()); err != nil {
			return fmt.Errorf("leader: write the lease: %w", err)
		}
		l.Holder, l.Addr, taken = holder, addr, true
		return nil
	})
	if err != nil {
		return Lease{}, false, err
	}
	return l, taken, nil
}

// Renew extends the lease while it is still l's (same holder and fencing token).
func (p *Postgres) Renew(ctx context.Context, l Lease, ttl time.Duration) error {
	tag, err := p.pool.Exec(ctx, `UPDATE leader_lease SET expires_at = clock_timestamp() + make_interval(secs => $3)
		WHERE id = 1 AND holder = $1 AND fence = $2`, l.Holder, l.Fence, ttl.Seconds())
	if err != nil {
		return fmt.Errorf("leader: renew: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: fence %d was taken over", ErrLost, l.Fence)
	}
	return nil
}

// Release expires the lease now while it is still l's.
func (p *Postgres) Release(ctx context.Context, l Lease) error {
	if _, err := p.pool.Exec(ctx, `UPDATE leader_lease SET expires_at = '-infinity'
		WHERE id = 1 AND holder = $1 AND fence = $2`, l.Holder, l.Fence); err != nil {
		return fmt.Errorf("leader: release: %w", err)
	}
	return nil
}

// Current returns the live lease.
func (p *Postgres) Current(ctx context.Context) (Lease, error) {
	var l Lease
	var live bool
	if err := p.pool.QueryRow(ctx, `SELECT holder, addr, fence, expires_at > clock_timestamp() FROM leader_lease WHERE id = 1`).
		Scan(&l.Holder, &l.Addr, &l.Fence, &live); err != nil {
		return Lease{}, fmt.Errorf("leader: read the lease: %w", err)
	}
	if !live {
		return Lease{}, nil
	}
	return l, nil
}
