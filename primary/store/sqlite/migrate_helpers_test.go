package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

// databaseAtVersion creates a database file migrated only up to version, as an older primary
// left it, and returns its path and an open handle the caller fills and closes.
func databaseAtVersion(t *testing.T, version int) (string, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), FileName)
	all, err := loadMigrations(migrationFiles)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", dsn(path, nil))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, to, err := migrate(context.Background(), db, all[:version], time.Now); err != nil || to != version {
		db.Close()
		t.Fatalf("migrate to %d: %d, %v", version, to, err)
	}
	return path, db
}
