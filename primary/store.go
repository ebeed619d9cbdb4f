package primary

import (
	"context"
	"flag"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/turncli/turncli/primary/secrets"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/postgres"
	"github.com/turncli/turncli/primary/store/sqlite"
)

// StoreConfig is the store's section of the primary's configuration.
type StoreConfig struct {
	// URL chooses the store: empty for SQLite in <StateDir>/turncli.db, a postgres:// or
	// postgresql:// URL for PostgreSQL (pool settings as its pool_* parameters), anything
	// else the path of a SQLite file.
	URL string
}

// BindFlags binds the section to fs, from the environment.
func (s *StoreConfig) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&s.URL, "store", os.Getenv("TURNCLI_STORE_URL"), "the store: empty for SQLite in the state directory, a SQLite file's path, or a postgres:// URL (pool_max_conns=N bounds its pool) (env TURNCLI_STORE_URL)")
}

// openStore opens the store cfg.Store.URL chooses: PostgreSQL for a postgres:// URL, else
// SQLite in the file it names or, when empty, in the state directory. A password in the URL
// becomes a live secret, so no log line or error people see shows it. observe hears of every
// transaction that changes state (see store.Options).
func openStore(ctx context.Context, cfg Config, live *secrets.Registry, observe func(time.Duration, error), threadEvents func()) (store.Store, error) {
	return OpenStore(ctx, cfg.StateDir, cfg.Store.URL, StoreOptions{Logger: cfg.Logger, Secrets: live, ObserveTransaction: observe,
		ThreadEventsCommitted: threadEvents, Fence: cfg.fence})
}

// StoreOptions are what OpenStore needs besides the store's place; every field may be zero.
type StoreOptions struct {
	Logger *slog.Logger
	// Secrets, when set, learns the URL's password.
	Secrets            *secrets.Registry
	ObserveTransaction func(time.Duration, error)
	// ThreadEventsCommitted hears of each commit that appended to the thread feed (see
	// store.Options).
	ThreadEventsCommitted func()
	// Fence is the leader's fencing token every write of a PostgreSQL store carries (zero:
	// writes are not fenced).
	Fence int64
}

// OpenStore opens the store storeURL chooses, as a primary on stateDir would: the one rule for
// the primary and for the commands that manage its store while it runs.
func OpenStore(ctx context.Context, stateDir, storeURL string, o StoreOptions) (store.Store, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Secrets == nil {
		o.Secrets = secrets.New()
	}
	live, observe := o.Secrets, o.ObserveTransaction
	logger := o.Logger.With("component", "store")
	if postgres.IsURL(storeURL) {
		if u, err := url.Parse(storeURL); err == nil {
			if password, ok := u.User.Password(); ok && password != "" {
				live.Add(password)
			}
		}
		logger.Info("store opening", "driver", "postgres")
		return postgres.Open(ctx, storeURL, postgres.Options{Logger: logger, ObserveTransaction: observe,
			ThreadEventsCommitted: o.ThreadEventsCommitted, Fence: o.Fence})
	}
	path := storeURL
	if path == "" {
		path = filepath.Join(stateDir, sqlite.FileName)
	}
	logger.Info("store opening", "driver", "sqlite", "path", path)
	return sqlite.Open(ctx, path, sqlite.Options{Logger: logger, ObserveTransaction: observe, ThreadEventsCommitted: o.ThreadEventsCommitted})
}
