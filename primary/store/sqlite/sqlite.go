package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/sqlstore"
)

// FileName is the database's name in the state directory.
const FileName = "turncli.db"

// Options tune a Store; the zero value is ready for production.
type Options struct {
	// Now is the clock for every timestamp the store writes; time.Now when nil.
	Now func() time.Time
	// BusyTimeout is how long a statement waits for a lock held by another process; 10 s when
	// zero.
	BusyTimeout time.Duration
	// ReadConns bounds the read pool; 4 when zero.
	ReadConns int
	Logger    *slog.Logger
	// ObserveTransaction and ThreadEventsCommitted are the portable store's (see
	// store.Options).
	ObserveTransaction    func(time.Duration, error)
	ThreadEventsCommitted func()
}

// Store is the SQLite store: the portable store over a Driver, which also tells how operators
// changed (store.OperatorChanges). Its methods are safe for concurrent use.
type Store struct {
	*store.Portable
	driver *Driver
}

var (
	_ store.Store           = (*Store)(nil)
	_ store.OperatorChanges = (*Store)(nil)
	_ store.Driver          = (*Driver)(nil)
)

// Open opens (creating it if needed) the database at path, applies the migrations it lacks
// and returns the store over it. It refuses a database written by a newer primary.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	d, err := OpenDriver(ctx, path, opts)
	if err != nil {
		return nil, err
	}
	return &Store{Portable: store.New(d, store.Options{
		Now: opts.Now, ObserveTransaction: opts.ObserveTransaction, ThreadEventsCommitted: opts.ThreadEventsCommitted,
	}), driver: d}, nil
}

// OperatorsStamp implements store.OperatorChanges.
func (s *Store) OperatorsStamp() uint64 { return s.driver.OperatorsStamp() }

// Driver is the SQLite store.Driver. Its methods are safe for concurrent use.
type Driver struct {
	sqlstore.Reader         // on the read pool
	write           *sql.DB // exactly one connection: the single writer
	read            *sql.DB // query-only connections
	// writer holds write's connection once migrated, and runs the write transactions.
	writer *writer
	// operatorChanges counts changes of operators across processes (see OperatorsStamp).
	operatorChanges *changeCounter
}

// OpenDriver opens (creating it if needed) the database at path, applies the migrations it
// lacks and returns the driver. It refuses a database written by a newer primary.
func OpenDriver(ctx context.Context, path string, opts Options) (*Driver, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 10 * time.Second
	}
	if opts.ReadConns <= 0 {
		opts.ReadConns = 4
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if err := makePrivate(abs); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	migrations, err := loadMigrations(migrationFiles)
	if err != nil {
		return nil, err
	}

	// Every connection: wait for other processes' locks, enforce foreign keys, fsync each
	// commit. The writer also sets WAL (persistent in the file) and takes the write lock at
	// BEGIN, so a transaction never fails halfway on a lock; readers can never write.
	common := []string{fmt.Sprintf("busy_timeout(%d)", opts.BusyTimeout.Milliseconds()), "foreign_keys(ON)", "synchronous(FULL)"}
	writeQuery := url.Values{"_txlock": {"immediate"}, "_pragma": append([]string{"journal_mode(WAL)"}, common...)}
	write, err := sql.Open("sqlite", dsn(abs, writeQuery))
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	write.SetMaxOpenConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)
	d := &Driver{write: write}

	// Migrate before the read pool exists: nothing reads a half-made schema.
	from, to, err := migrate(ctx, write, migrations, opts.Now)
	if err != nil {
		write.Close()
		return nil, err
	}
	if from != to {
		opts.Logger.Info("store migrated", "path", abs, "from_version", from, "to_version", to)
	}
	if d.writer, err = newWriter(ctx, write); err != nil {
		write.Close()
		return nil, fmt.Errorf("store: %w", err)
	}

	readQuery := url.Values{"_pragma": append([]string{"query_only(ON)"}, common...)}
	d.read, err = sql.Open("sqlite", dsn(abs, readQuery))
	if err != nil {
		d.writer.close()
		write.Close()
		return nil, fmt.Errorf("store: %w", err)
	}
	d.read.SetMaxOpenConns(opts.ReadConns)
	d.read.SetMaxIdleConns(opts.ReadConns)
	d.Reader = sqlstore.NewReader(dialect{}, queries{d.read})
	if d.operatorChanges, err = openChangeCounter(abs + OperatorsMarkerSuffix); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// makePrivate creates the database file 0600 when it is missing and makes an existing one and
// its -wal and -shm files 0600: it holds credentials' hashes and every conversation's state.
// SQLite creates -wal and -shm with the database file's mode.
func makePrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Chmod(path+suffix, 0o600); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// dsn is a file: URI, so that any character of the path survives.
func dsn(path string, q url.Values) string {
	return (&url.URL{Scheme: "file", Path: path, RawQuery: q.Encode()}).String()
}

// Close closes the read pool, then the writer (checkpointing the WAL).
func (d *Driver) Close() error {
	return errors.Join(d.read.Close(), d.writer.close(), d.write.Close(), d.operatorChanges.Close())
}

// OperatorsStamp is the count of operator changes by every process with the database open,
// read from shared memory without a query or a system call.
func (d *Driver) OperatorsStamp() uint64 { return d.operatorChanges.Load() }

// Update implements store.Driver: one write transaction on the single writer, so
// transactions run one at a time and f is never retried; those queued together share one
// BEGIN IMMEDIATE and COMMIT, each in its own savepoint (group.go).
func (d *Driver) Update(ctx context.Context, f func(store.Tx) error) error {
	var operatorsChanged bool
	err := d.writer.transact(ctx, func(prepared preparedTx) error {
		conn := newWriteConn(prepared)
		t := &tx{Tx: sqlstore.NewTx(dialect{}, conn), tx: prepared}
		err := f(t)
		if err == nil {
			err = *conn.failed
		}
		operatorsChanged = t.operatorsChanged
		return err
	})
	if err == nil && operatorsChanged {
		d.operatorChanges.Add(1)
	}
	return err
}

// tx is one write transaction: the shared store.Tx, which also notes changes of operators.
type tx struct {
	*sqlstore.Tx
	tx preparedTx
	// operatorsChanged: an operator was created or removed; counted once committed.
	operatorsChanged bool
}

// Times are stored as Unix nanoseconds.
func nanos(t time.Time) int64 { return t.UnixNano() }
