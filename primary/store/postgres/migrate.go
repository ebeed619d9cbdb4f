package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/schema"
)

// migrationLock is the key of the advisory lock that serializes migrations of a database
// across primaries ("turncli" in ASCII).
const migrationLock int64 = 0x7475726e636c69

// SchemaVersion is the newest schema version this primary knows: the newest of the store's
// migrations, shared with SQLite (package schema).
func SchemaVersion() int { return schema.Version() }

// migrate brings the database to the newest version known here and reports the versions it
// found and left. Everything happens in one transaction after the advisory lock: a primary
// that starts while another migrates waits for it, then finds the work done; a failed
// migration leaves the database as it was. A database of the legacy numbering is first
// renumbered (see legacy.go), in the same transaction.
func migrate(ctx context.Context, pool *pgxpool.Pool, now func() time.Time) (from, to int, err error) {
	ms, err := schema.LoadFor(schema.Files(), schema.PostgreSQL)
	if err != nil {
		return 0, 0, err
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
			return fmt.Errorf("store: migration lock: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    INTEGER PRIMARY KEY,
			name       TEXT    NOT NULL,
			applied_at BIGINT  NOT NULL
		)`); err != nil {
			return fmt.Errorf("store: schema_migrations: %w", err)
		}
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&from); err != nil {
			return fmt.Errorf("store: schema version: %w", err)
		}
		legacy, err := isLegacy(ctx, tx, from)
		if err != nil {
			return err
		}
		if legacy {
			if from, err = renumberLegacy(ctx, tx, from, ms, now); err != nil {
				return err
			}
		}
		if from > len(ms) {
			return fmt.Errorf("store: %w: the database is at version %d, this primary knows up to %d", store.ErrSchemaTooNew, from, len(ms))
		}
		for _, m := range ms[from:] {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("store: migration %04d_%s: %w", m.Version, m.Name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
				m.Version, m.Name, nanos(now())); err != nil {
				return fmt.Errorf("store: record migration %04d: %w", m.Version, err)
			}
		}
		return nil
	})
	if err != nil {
		return from, from, err
	}
	return from, len(ms), nil
}
