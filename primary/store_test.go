package primary

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turncli/turncli/internal/pgtest"
	"github.com/turncli/turncli/primary/secrets"
	"github.com/turncli/turncli/primary/store/postgres"
	"github.com/turncli/turncli/primary/store/sqlite"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func TestOpenStore(t *testing.T) {
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))

	t.Run("NoURLKeepsSQLiteInTheStateDirectory", func(t *testing.T) {
		dir := t.TempDir()
		db, err := openStore(ctx, Config{StateDir: dir, Logger: logger}, secrets.New(), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, ok := db.(*sqlite.Store); !ok {
			t.Fatalf("store %T, want SQLite", db)
		}
		if _, err := os.Stat(filepath.Join(dir, sqlite.FileName)); err != nil {
			t.Fatalf("no database in the state directory: %v", err)
		}
	})

	t.Run("APathIsASQLiteFile", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "elsewhere.db")
		db, err := openStore(ctx, Config{StateDir: t.TempDir(), Store: StoreConfig{URL: path}, Logger: logger}, secrets.New(), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("no database at the path: %v", err)
		}
	})

	t.Run("APostgresURLOpensPostgreSQLAndItsPasswordIsASecret", func(t *testing.T) {
		// The test cluster trusts every local connection: the password is not checked.
		url := strings.Replace(pgtest.NewDatabase(t), "postgres@", "postgres:db-password-7@", 1)
		live := secrets.New()
		db, err := openStore(ctx, Config{StateDir: t.TempDir(), Store: StoreConfig{URL: url}, Logger: logger}, live, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, ok := db.(*postgres.Store); !ok {
			t.Fatalf("store %T, want PostgreSQL", db)
		}
		if got := live.Redact("dial db-password-7"); strings.Contains(got, "db-password-7") {
			t.Fatalf("the password is not a live secret: %q", got)
		}
	})
}
