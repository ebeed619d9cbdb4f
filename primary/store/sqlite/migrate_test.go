package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"
)

// These tests run migrate on schemas of their own, to show how a later migration is applied.

func openRaw(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", dsn(filepath.Join(t.TempDir(), FileName), nil))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

func loadTestMigrations(t *testing.T, files map[string]string) []migration {
	t.Helper()
	fsys := fstest.MapFS{}
	for name, body := range files {
		fsys["migrations/"+name] = &fstest.MapFile{Data: []byte(body)}
	}
	ms, err := loadMigrations(fsys)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func tableExists(t *testing.T, db *sql.DB, name string) bool {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

func schemaVersion(t *testing.T, db *sql.DB) int {
	t.Helper()
	var v int
	if err := db.QueryRow(`SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestMigrate(t *testing.T) {
	ctx := context.Background()
	v1 := map[string]string{"0001_first.sql": "CREATE TABLE first (x INTEGER) STRICT;"}
	v2 := map[string]string{
		"0001_first.sql":  v1["0001_first.sql"],
		"0002_second.sql": "CREATE TABLE second (y TEXT) STRICT; INSERT INTO first (x) VALUES (2);",
	}

	t.Run("ALaterMigrationIsAppliedOnTheNextOpen", func(t *testing.T) {
		db := openRaw(t)
		if from, to, err := migrate(ctx, db, loadTestMigrations(t, v1), time.Now); err != nil || from != 0 || to != 1 {
			t.Fatalf("first migrate: from %d to %d, %v", from, to, err)
		}
		if from, to, err := migrate(ctx, db, loadTestMigrations(t, v2), time.Now); err != nil || from != 1 || to != 2 {
			t.Fatalf("second migrate: from %d to %d, %v", from, to, err)
		}
		if from, to, err := migrate(ctx, db, loadTestMigrations(t, v2), time.Now); err != nil || from != 2 || to != 2 {
			t.Fatalf("third migrate: from %d to %d, %v", from, to, err)
		}
		var rows int
		if err := db.QueryRow(`SELECT count(*) FROM first`).Scan(&rows); err != nil || rows != 1 {
			t.Fatalf("0002 ran %d times (%v), want once", rows, err)
		}
		if !tableExists(t, db, "second") {
			t.Fatal("table of 0002 missing")
		}
	})

	t.Run("AFailedMigrationLeavesNothingOfItself", func(t *testing.T) {
		db := openRaw(t)
		broken := map[string]string{
			"0001_first.sql":  v1["0001_first.sql"],
			"0002_broken.sql": "CREATE TABLE half (z INTEGER) STRICT; INSERT INTO nowhere VALUES (1);",
		}
		if _, _, err := migrate(ctx, db, loadTestMigrations(t, broken), time.Now); err == nil {
			t.Fatal("broken migration applied")
		}
		if v := schemaVersion(t, db); v != 1 {
			t.Fatalf("version %d after a failed 0002, want 1", v)
		}
		if tableExists(t, db, "half") {
			t.Fatal("the failed migration's first statement was kept")
		}
	})

	t.Run("MisnumberedFilesAreRefused", func(t *testing.T) {
		for name, files := range map[string]map[string]string{
			"gap":      {"0001_a.sql": "", "0003_c.sql": ""},
			"badName":  {"1_a.sql": ""},
			"notFirst": {"0002_b.sql": ""},
		} {
			fsys := fstest.MapFS{}
			for f, body := range files {
				fsys["migrations/"+f] = &fstest.MapFile{Data: []byte(body)}
			}
			if _, err := loadMigrations(fsys); err == nil {
				t.Errorf("%s: loaded", name)
			}
		}
	})
}

func TestPragmas(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), FileName), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	t.Run("TheWriterRunsWALWithSynchronousFULL", func(t *testing.T) {
		for pragma, want := range map[string]string{
			"journal_mode": "wal", "synchronous": "2", "foreign_keys": "1", "busy_timeout": "10000", "query_only": "0",
		} {
			var got string
			if err := s.driver.writer.conn.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("writer PRAGMA %s = %s, want %s", pragma, got, want)
			}
		}
	})

	t.Run("ReadersAreQueryOnly", func(t *testing.T) {
		for pragma, want := range map[string]string{"journal_mode": "wal", "query_only": "1", "busy_timeout": "10000"} {
			var got string
			if err := s.driver.read.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("reader PRAGMA %s = %s, want %s", pragma, got, want)
			}
		}
		if _, err := s.driver.read.ExecContext(ctx, `DELETE FROM audit_log`); err == nil {
			t.Error("a reader wrote")
		}
	})
}
