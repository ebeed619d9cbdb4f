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
}

// Store is the SQLite store. Its methods are safe for concurrent use.
type Store struct {
	write *sql.DB // exactly one connection: the single writer
	read  *sql.DB // query-only connections
	now   func() time.Time
	// operatorChanges counts changes of operators across processes (see OperatorsStamp).
	operatorChanges *changeCounter
}

var _ store.Store = (*Store)(nil)

// Open opens (creating it if needed) the database at path, applies the migrations it lacks
// and returns the store. It refuses a database written by a newer primary.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
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
	s := &Store{write: write, now: opts.Now}

	// Migrate before the read pool exists: nothing reads a half-made schema.
	from, to, err := migrate(ctx, write, migrations, opts.Now)
	if err != nil {
		write.Close()
		return nil, err
	}
	if from != to {
		opts.Logger.Info("store migrated", "path", abs, "from_version", from, "to_version", to)
	}

	readQuery := url.Values{"_pragma": append([]string{"query_only(ON)"}, common...)}
	s.read, err = sql.Open("sqlite", dsn(abs, readQuery))
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("store: %w", err)
	}
	s.read.SetMaxOpenConns(opts.ReadConns)
	s.read.SetMaxIdleConns(opts.ReadConns)
	if s.operatorChanges, err = openChangeCounter(abs + OperatorsMarkerSuffix); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
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
func (s *Store) Close() error {
	return errors.Join(s.read.Close(), s.write.Close(), s.operatorChanges.Close())
}

// inTx runs f in one write transaction (BEGIN IMMEDIATE on the single writer) and commits it,
// or rolls it back if f fails.
func (s *Store) inTx(ctx context.Context, f func(tx *sql.Tx) error) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	if err := f(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	return nil
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{store.ErrInvalid}, args...)...)
}

// Times are stored as Unix nanoseconds.
func nanos(t time.Time) int64 { return t.UnixNano() }

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }
