package postgres

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/turncli/turncli/internal/pgtest"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/schema"
)

// legacyDatabase creates a database as a primary of the legacy numbering left it at version:
// the frozen legacy migrations up to it, in one transaction, each recorded with its own time.
func legacyDatabase(t *testing.T, version int) string {
	t.Helper()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	files, err := fs.Sub(legacyFiles, "legacy")
	if err != nil {
		t.Fatal(err)
	}
	legacy, err := schema.Load(files)
	if err != nil {
		t.Fatal(err)
	}
	conn := connect(t, url)
	if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,
			applied_at BIGINT NOT NULL)`); err != nil {
			return err
		}
		for _, m := range legacy[:version] {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations VALUES ($1, $2, $3)`, m.Version, m.Name, int64(m.Version)*1000); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatalf("legacy migrations to %d: %v", version, err)
	}
	return url
}

// connect connects to the database at url directly, as another program would, until the test
// ends.
func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// appliedMigration is a row of schema_migrations.
type appliedMigration struct {
	Version   int
	Name      string
	AppliedAt int64
}

func applied(t *testing.T, conn *pgx.Conn) []appliedMigration {
	t.Helper()
	rows, err := conn.Query(context.Background(), `SELECT version, name, applied_at FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[appliedMigration])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// catalog describes a database's schema in the public namespace, names of constraints left
// out (PostgreSQL numbers unnamed ones in order of creation): each column with its type,
// nullability and default, each index's definition, each constraint's definition.
func catalog(t *testing.T, conn *pgx.Conn) []string {
	t.Helper()
	rows, err := conn.Query(context.Background(), `
		SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' ||
			coalesce(column_default, '') || ' ' || coalesce(is_identity, '')
		FROM information_schema.columns WHERE table_schema = 'public'
		UNION ALL
		SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = 'public'
		UNION ALL
		SELECT 'constraint ' || conrelid::regclass || ' ' || pg_get_constraintdef(oid)
		FROM pg_constraint WHERE connamespace = 'public'::regnamespace
		UNION ALL
		SELECT 'sequence ' || sequencename FROM pg_sequences WHERE schemaname = 'public'`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	for i := range out {
		out[i] = sameFunctions.Replace(out[i])
	}
	slices.Sort(out)
	return out
}

// sameFunctions spells alike the checks the legacy schema and the shared one write with
// different functions of the same value: char_length and length of text, octet_length and
// length of bytea (the operator's digest).
var sameFunctions = strings.NewReplacer("char_length(", "length(", "octet_length(digest)", "length(digest)")

func TestLegacyNumbering(t *testing.T) {
	ctx := context.Background()
	shared, err := schema.LoadFor(schema.Files(), schema.PostgreSQL)
	if err != nil {
		t.Fatal(err)
	}
	fresh := pgtest.NewDatabase(t)
	d, err := OpenDriver(ctx, fresh, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	want := catalog(t, connect(t, fresh))

	for version := 1; version <= legacyVersions; version++ {
		t.Run(fmt.Sprintf("ADatabaseAtLegacyVersion%dIsRenumberedWithItsData", version), func(t *testing.T) {
			url := legacyDatabase(t, version)
			conn := connect(t, url)
			if _, err := conn.Exec(ctx, `INSERT INTO continuations (idempotency_key, channel, thread, text, created_at)
				VALUES ('job/1', '!room', '', 'done', 1)`); err != nil {
				t.Fatal(err)
			}
			s, err := Open(ctx, url, Options{})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer s.Close()
			cs, err := s.PendingContinuations(ctx, 0, 10)
			if err != nil || len(cs) != 1 || cs[0].IdempotencyKey != "job/1" || cs[0].Text != "done" {
				t.Fatalf("after renumbering: %+v, %v; want the continuation job/1", cs, err)
			}
			if _, err := s.SetShellMode(ctx, "!room", "", "code", store.ShellModeMinimal, "w1", "@ann"); err != nil {
				t.Fatalf("a shell mode with its placement (shared 11): %v", err)
			}

			got := applied(t, conn)
			if len(got) != len(shared) {
				t.Fatalf("schema_migrations %+v, want versions 1..%d", got, len(shared))
			}
			for i, m := range got {
				wantAt := int64(1000) // legacy 1 made shared 1..10
				switch {
				case m.Version == 11 && version >= 3:
					wantAt = 3000
				case m.Version == 12 && version >= 2:
					wantAt = 2000
				case m.Version >= 11: // applied now, after the test's own times
					wantAt = -1
				}
				if m.Version != i+1 || m.Name != shared[i].Name || (wantAt >= 0 && m.AppliedAt != wantAt) || (wantAt < 0 && m.AppliedAt < 1e12) {
					t.Errorf("schema_migrations row %d = %+v, want version %d %q applied at %d", i, m, i+1, shared[i].Name, wantAt)
				}
			}
			if diff := diffLines(catalog(t, conn), want); diff != "" {
				t.Errorf("the renumbered schema differs from a new database's (-renumbered +new):\n%s", diff)
			}
		})
	}

	t.Run("PrimariesOpeningALegacyDatabaseTogetherRenumberItOnce", func(t *testing.T) {
		url := legacyDatabase(t, 1)
		openTogether(t, url, 4)
		got := applied(t, connect(t, url))
		if len(got) != len(shared) || got[len(got)-1].Version != len(shared) {
			t.Fatalf("schema_migrations %+v, want 1..%d once each", got, len(shared))
		}
	})

	t.Run("ANewDatabaseIsNotTakenForALegacyOne", func(t *testing.T) {
		got := applied(t, connect(t, fresh))
		if len(got) != len(shared) {
			t.Fatalf("schema_migrations %+v, want 1..%d", got, len(shared))
		}
		for i, m := range got {
			if m.Name != shared[i].Name {
				t.Errorf("version %d is named %q, want %q", m.Version, m.Name, shared[i].Name)
			}
		}
	})

	t.Run("AFailedRenumberingLeavesTheLegacyDatabaseAsItWas", func(t *testing.T) {
		url := legacyDatabase(t, 2)
		conn := connect(t, url)
		// Something the legacy version 3 would create is in the way: its migration fails.
		if _, err := conn.Exec(ctx, `ALTER TABLE shell_modes ADD COLUMN worker_key TEXT`); err != nil {
			t.Fatal(err)
		}
		before := applied(t, conn)
		if d, err := OpenDriver(ctx, url, Options{}); err == nil || !strings.Contains(err.Error(), "legacy migration 0003_shell_mode_placement") {
			if d != nil {
				d.Close()
			}
			t.Fatalf("OpenDriver = %v, want the legacy migration 0003's failure", err)
		}
		if after := applied(t, conn); !slices.Equal(after, before) {
			t.Fatalf("schema_migrations %+v after a failed renumbering, want %+v", after, before)
		}
	})
}

// diffLines lists the lines only in a (-) and only in b (+), both sorted.
func diffLines(a, b []string) string {
	var out strings.Builder
	for _, l := range a {
		if !slices.Contains(b, l) {
			out.WriteString("- " + l + "\n")
		}
	}
	for _, l := range b {
		if !slices.Contains(a, l) {
			out.WriteString("+ " + l + "\n")
		}
	}
	return out.String()
}
