package sqlite

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// A database left at any older version, by any primary before this one, opens at the newest
// version with its records.
func TestMigrateFromEveryOlderVersion(t *testing.T) {
	ctx := context.Background()
	for version := 1; version < SchemaVersion(); version++ {
		t.Run(fmt.Sprintf("Version%dKeepsItsContinuations", version), func(t *testing.T) {
			path, db := databaseAtVersion(t, version)
			created := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
			_, err := db.ExecContext(ctx, `INSERT INTO continuations (idempotency_key, channel, thread, text, created_at)
				VALUES ('job/1', 'room', 't1', 'done', ?)`, nanos(created))
			db.Close()
			if err != nil {
				t.Fatal(err)
			}
			s, err := Open(ctx, path, Options{})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer s.Close()
			var got int
			if err := s.driver.read.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&got); err != nil || got != SchemaVersion() {
				t.Fatalf("version %d (%v), want %d", got, err, SchemaVersion())
			}
			cs, err := s.PendingContinuations(ctx, 0, 10)
			if err != nil || len(cs) != 1 || cs[0].IdempotencyKey != "job/1" || cs[0].Text != "done" ||
				!cs[0].CreatedAt.Equal(created) || cs[0].Post || cs[0].Checkpoint != nil {
				t.Fatalf("continuations after migrating from %d: %+v, %v", version, cs, err)
			}
		})
	}
}
