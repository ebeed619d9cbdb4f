package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/sqlstore"
)

// Options tune a Store; the zero value is ready for production.
type Options struct {
	// Now is the clock for every timestamp the store writes; time.Now when nil.
	Now func() time.Time
	// MaxConns bounds the pool when the URL has no pool_max_conns; pgxpool's default (the
	// larger of 4 and the number of CPUs) when zero.
	MaxConns int32
	// ObserveTransaction and ThreadEventsCommitted are the portable store's (see
	// store.Options).
	ObserveTransaction    func(time.Duration, error)
	ThreadEventsCommitted func()
	Logger                *slog.Logger
	// Fence, when not zero, is the fencing token of the leader lease this store's primary
	// holds (package primary/leader): every write transaction first checks it is still the
	// newest, so a primary that lost the lease writes nothing more.
	Fence int64
}

// Store is the PostgreSQL store: the portable store over a Driver. Its methods are safe for
// concurrent use.
type Store struct {
	*store.Portable
	driver *Driver
}

var (
	_ store.Store  = (*Store)(nil)
	_ store.Driver = (*Driver)(nil)
)

// IsURL reports whether s names a PostgreSQL database (a postgres:// or postgresql:// URL).
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Open connects to the database at url, applies the migrations it lacks and returns the store
// over it. It refuses a database written by a newer primary.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	d, err := OpenDriver(ctx, url, opts)
	if err != nil {
		return nil, err
	}
	return &Store{Portable: store.New(d, store.Options{
		Now: opts.Now, ObserveTransaction: opts.ObserveTransaction, ThreadEventsCommitted: opts.ThreadEventsCommitted,
	}), driver: d}, nil
}

// Driver is the PostgreSQL store.Driver. Its methods are safe for concurrent use.
type Driver struct {
	sqlstore.Reader // on the pool: the latest committed state
	pool            *pgxpool.Pool
	dialect         dialect
	fence           int64 // Options.Fence
}

// OpenDriver connects to the database at url, applies the migrations it lacks and returns the
// driver. It refuses a database written by a newer primary.
func OpenDriver(ctx context.Context, url string, opts Options) (*Driver, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// The message may quote the URL, password included: say only what is wrong.
		var pe *pgconn.ParseConfigError
		if errors.As(err, &pe) {
			return nil, errors.New("store: the PostgreSQL URL is malformed")
		}
		return nil, fmt.Errorf("store: PostgreSQL URL: %w", err)
	}
	if opts.MaxConns > 0 && !strings.Contains(url, "pool_max_conns=") {
		cfg.MaxConns = opts.MaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	from, to, err := migrate(ctx, pool, opts.Now)
	if err != nil {
		pool.Close()
		return nil, err
	}
	if from != to {
		opts.Logger.Info("store migrated", "database", cfg.ConnConfig.Database, "from_version", from, "to_version", to)
	}
	d := newDialect()
	return &Driver{Reader: sqlstore.NewReader(d, queries{pool}), pool: pool, dialect: d, fence: opts.Fence}, nil
}

// Close closes the pool, waiting for connections in use to be returned.
func (d *Driver) Close() error {
	d.pool.Close()
	return nil
}

// maxAttempts bounds how often Update runs one transaction that keeps failing to serialize.
const maxAttempts = 10

// Update implements store.Driver: one SERIALIZABLE transaction, run again from the start when
// PostgreSQL reports a serialization failure or a deadlock, at most maxAttempts times in all.
func (d *Driver) Update(ctx context.Context, f func(store.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := d.update(ctx, f)
		if !retryable(err) || attempt == maxAttempts {
			return err
		}
		// A short, growing, random pause lets the winner commit before the next try.
		pause := time.Duration(rand.Int64N(int64(attempt) * int64(time.Millisecond)))
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
	}
}

// update runs f once in one transaction.
func (d *Driver) update(ctx context.Context, f func(store.Tx) error) error {
	conn, err := d.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer conn.Release() // the pool discards a connection left in a transaction
	p := &pipeline{conn: conn}
	defer p.rollback(context.WithoutCancel(ctx)) // nothing to do after the commit
	d.beginWrite(p)
	if err := f(sqlstore.NewTx(d.dialect, newWriteConn(p))); err != nil {
		return err
	}
	if err := p.commit(ctx); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	return nil
}

// beginWrite begins every write transaction of the driver. It is where a writer proves it
// may still write (a leader's fencing token against the newest one recorded) before anything
// is written, so that check covers every durable write. Both are held, to go with the
// transaction's first statement: the check runs on the server before that statement and is
// read before its result, so a refused writer's statement is rolled back unread.
//
// The token is read FOR SHARE and stays locked until the transaction ends: a takeover, which
// updates it, waits for the writes in flight, and a write that reads it after a takeover
// committed sees the new token (or, its snapshot being older, fails to serialize and is run
// again) and is refused.
func (d *Driver) beginWrite(p *pipeline) {
	p.hold(func(br pgx.BatchResults) error {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("store: begin: %w", err)
		}
		return nil
	}, `BEGIN ISOLATION LEVEL SERIALIZABLE`)
	if d.fence == 0 {
		return
	}
	p.hold(func(br pgx.BatchResults) error {
		var newest int64
		if err := br.QueryRow().Scan(&newest); err != nil {
			return fmt.Errorf("store: fence: %w", err)
		}
		if newest != d.fence {
			return fmt.Errorf("%w (fence %d, newest %d)", ErrNotLeader, d.fence, newest)
		}
		return nil
	}, `SELECT fence FROM leader_fence WHERE id = 1 FOR SHARE`)
}

// ErrNotLeader refuses a write of a primary whose leader lease a newer leader took over. The
// caller may try again on the leader.
var ErrNotLeader = fault.New(fault.Unavailable, "not the leader")

// retryable reports whether err is PostgreSQL giving up a transaction that may succeed when
// run again: a serialization failure or a deadlock.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// Times are stored as Unix nanoseconds.
func nanos(t time.Time) int64 { return t.UnixNano() }
