package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"time"

	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/schema"
)

// migrationFiles are the store's migrations, shared with PostgreSQL (package schema).
var migrationFiles = schema.Files()

// migration is one numbered schema change.
type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations reads migrations/NNNN_name.sql from fsys in SQLite's SQL (see package
// schema).
func loadMigrations(fsys fs.FS) ([]migration, error) {
	ms, err := schema.LoadFor(fsys, schema.SQLite)
	if err != nil {
		return nil, err
	}
	out := make([]migration, len(ms))
	for i, m := range ms {
		out[i] = migration{version: m.Version, name: m.Name, sql: m.SQL}
	}
	return out, nil
}

// SchemaVersion is the newest schema version this primary knows.
func SchemaVersion() int {
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		return 0
	}
	return len(ms)
}

// migrate brings db to the newest version in ms, one migration per transaction, and reports
// the versions it found and left. Each step re-reads the version under the write lock, so two
// processes opening the same file never apply a migration twice.
func migrate(ctx context.Context, db *sql.DB, ms []migration, now func() time.Time) (from, to int, err error) {
	const createTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at INTEGER NOT NULL
	) STRICT`
	if _, err := db.ExecContext(ctx, createTable); err != nil {
		return 0, 0, fmt.Errorf("store: schema_migrations: %w", err)
	}
	from = -1
	for {
		before, applied, err := migrateStep(ctx, db, ms, now)
		if from < 0 {
			from = before
		}
		if err != nil || !applied {
			return from, before, err
		}
	}
}

// migrateStep applies the migration after the database's version, if there is one, and
// reports the version it found.
func migrateStep(ctx context.Context, db *sql.DB, ms []migration, now func() time.Time) (before int, applied bool, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, false, fmt.Errorf("store: begin migration: %w", err)
	}
	defer tx.Rollback() // a no-op after Commit
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&before); err != nil {
		return 0, false, fmt.Errorf("store: schema version: %w", err)
	}
	switch {
	case before > len(ms):
		return before, false, fmt.Errorf("store: %w: the database is at version %d, this primary knows up to %d", store.ErrSchemaTooNew, before, len(ms))
	case before == len(ms):
		return before, false, nil
	}
	m := ms[before]
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return before, false, fmt.Errorf("store: migration %04d_%s: %w", m.version, m.name, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		m.version, m.name, nanos(now())); err != nil {
		return before, false, fmt.Errorf("store: record migration %04d: %w", m.version, err)
	}
	if err := tx.Commit(); err != nil {
		return before, false, fmt.Errorf("store: commit migration %04d: %w", m.version, err)
	}
	return before, true, nil
}
