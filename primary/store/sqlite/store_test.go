package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/sqlite"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// clock is a settable clock for the store.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)

// open opens a store in dir (a fresh temporary directory when empty), closed at cleanup.
func open(t *testing.T, dir string, clk *clock) *sqlite.Store {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	opts := sqlite.Options{}
	if clk != nil {
		opts.Now = clk.Now
	}
	s, err := sqlite.Open(context.Background(), filepath.Join(dir, sqlite.FileName), opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// raw opens the store's file directly, as another process (or a test injecting a failure)
// would.
func raw(t *testing.T, dir string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, sqlite.FileName)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func enqueue(t *testing.T, s store.Store, key string) {
	t.Helper()
	if _, created, err := s.EnqueueContinuation(context.Background(), store.NewContinuation{
		IdempotencyKey: key, Channel: "room", Thread: "t1", Text: "text of " + key,
	}); err != nil || !created {
		t.Fatalf("enqueue %s: created %v, %v", key, created, err)
	}
}

func pendingKeys(t *testing.T, s store.Store) []string {
	t.Helper()
	cs, err := s.PendingContinuations(context.Background(), 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{}
	for _, c := range cs {
		keys = append(keys, c.IdempotencyKey)
	}
	return keys
}

func TestOpen(t *testing.T) {
	ctx := context.Background()

	t.Run("MigrationsApplyOnceAndReopeningKeepsData", func(t *testing.T) {
		dir := t.TempDir()
		s, err := sqlite.Open(ctx, filepath.Join(dir, sqlite.FileName), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		enqueue(t, s, "job/1")
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = open(t, dir, nil)
		if got := pendingKeys(t, s); !reflect.DeepEqual(got, []string{"job/1"}) {
			t.Fatalf("after reopen pending %v", got)
		}
		rows, err := raw(t, dir).Query(`SELECT version FROM schema_migrations ORDER BY version`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var versions []int
		for rows.Next() {
			var v int
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			versions = append(versions, v)
		}
		if len(versions) != sqlite.SchemaVersion() || versions[len(versions)-1] != sqlite.SchemaVersion() {
			t.Fatalf("schema_migrations %v, want 1..%d once each", versions, sqlite.SchemaVersion())
		}
	})

	t.Run("ADatabaseFromANewerPrimaryIsRefused", func(t *testing.T) {
		dir := t.TempDir()
		s, err := sqlite.Open(ctx, filepath.Join(dir, sqlite.FileName), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		if _, err := raw(t, dir).Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'future', 0)`,
			sqlite.SchemaVersion()+1); err != nil {
			t.Fatal(err)
		}
		s, err = sqlite.Open(ctx, filepath.Join(dir, sqlite.FileName), sqlite.Options{})
		if !errors.Is(err, store.ErrSchemaTooNew) {
			if s != nil {
				s.Close()
			}
			t.Fatalf("Open = %v, want ErrSchemaTooNew", err)
		}
	})
}
