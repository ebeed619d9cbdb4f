package primary

import (
	"context"
	"net/url"
	"path/filepath"
	"time"

	"github.com/turncli/turncli/primary/secrets"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/postgres"
	"github.com/turncli/turncli/primary/store/sqlite"
)

// openStore opens the store cfg.StoreURL chooses: PostgreSQL for a postgres:// URL, else
// SQLite in the file it names or, when empty, in the state directory. A password in the URL
// becomes a live secret, so no log line or error people see shows it. observe hears of every
// transaction that changes state (see store.Options).
func openStore(ctx context.Context, cfg Config, live *secrets.Registry, observe func(time.Duration, error)) (store.Store, error) {
	logger := cfg.Logger.With("component", "store")
	if postgres.IsURL(cfg.StoreURL) {
		if u, err := url.Parse(cfg.StoreURL); err == nil {
			if password, ok := u.User.Password(); ok && password != "" {
				live.Add(password)
			}
		}
		logger.Info("store opening", "driver", "postgres")
		return postgres.Open(ctx, cfg.StoreURL, postgres.Options{Logger: logger, ObserveTransaction: observe})
	}
	path := cfg.StoreURL
	if path == "" {
		path = filepath.Join(cfg.StateDir, sqlite.FileName)
	}
	logger.Info("store opening", "driver", "sqlite", "path", path)
	return sqlite.Open(ctx, path, sqlite.Options{Logger: logger, ObserveTransaction: observe})
}
