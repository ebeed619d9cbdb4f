package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/turncli/turncli/primary/store/schema"
)

// Before the store's migrations were shared with SQLite, PostgreSQL had a numbering of its
// own, kept here frozen (legacy/migrations): its version 1 made every table of SQLite's
// version 10, its version 2 the leader lease, its version 3 SQLite's version 11. A database
// of that numbering is renumbered once, in the migration transaction under the advisory lock:
// its missing legacy migrations are applied, then its schema_migrations rows are replaced by
// the shared versions those migrations made, each keeping the time it was applied.

//go:embed legacy/migrations/*.sql
var legacyFiles embed.FS

// legacyToShared maps each legacy version to the shared versions whose changes it made.
var legacyToShared = map[int][]int{
	1: {1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
	2: {12}, // the leader lease
	3: {11}, // the shell mode's placement
}

// legacyVersions is the number of legacy migrations; no primary will add one.
const legacyVersions = 3

// isLegacy reports whether the database, at version from, is of the legacy numbering. A
// database of the shared numbering is never left at versions 1–3 (a primary applies every
// migration it knows in one transaction, and the shared sequence had 12 from its start);
// besides, its approvals table comes at version 4, the legacy one's at version 1.
func isLegacy(ctx context.Context, tx pgx.Tx, from int) (bool, error) {
	if from < 1 || from > legacyVersions {
		return false, nil
	}
	var hasApprovals bool
	if err := tx.QueryRow(ctx, `SELECT to_regclass('approvals') IS NOT NULL`).Scan(&hasApprovals); err != nil {
		return false, fmt.Errorf("store: schema version: %w", err)
	}
	return hasApprovals, nil
}

// renumberLegacy completes a legacy database at version from with the legacy migrations it
// lacks, renumbers its schema_migrations to the shared versions (shared is the shared
// sequence) and returns its shared version.
func renumberLegacy(ctx context.Context, tx pgx.Tx, from int, shared []schema.Migration, now func() time.Time) (int, error) {
	files, err := fs.Sub(legacyFiles, "legacy")
	if err != nil {
		return 0, err
	}
	legacy, err := schema.Load(files)
	if err != nil {
		return 0, err
	}
	for _, m := range legacy[from:] {
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return 0, fmt.Errorf("store: legacy migration %04d_%s: %w", m.Version, m.Name, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
			m.Version, m.Name, nanos(now())); err != nil {
			return 0, fmt.Errorf("store: record legacy migration %04d: %w", m.Version, err)
		}
	}
	rows, err := tx.Query(ctx, `DELETE FROM schema_migrations RETURNING version, applied_at`)
	if err != nil {
		return 0, fmt.Errorf("store: renumber migrations: %w", err)
	}
	applied, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct {
		Version   int
		AppliedAt int64
	}])
	if err != nil {
		return 0, fmt.Errorf("store: renumber migrations: %w", err)
	}
	version := 0
	for _, a := range applied {
		for _, v := range legacyToShared[a.Version] {
			if v > len(shared) {
				return 0, fmt.Errorf("store: renumber migrations: this primary knows no version %d", v)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
				v, shared[v-1].Name, a.AppliedAt); err != nil {
				return 0, fmt.Errorf("store: renumber migration %04d: %w", v, err)
			}
			version = max(version, v)
		}
	}
	return version, nil
}
