package postgres_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/turncli/turncli/internal/pgtest"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/postgres"
)

func openDriver(t *testing.T, url string, opts postgres.Options) *postgres.Driver {
	t.Helper()
	d, err := postgres.OpenDriver(context.Background(), url, opts)
	if err != nil {
		t.Fatalf("OpenDriver: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func versions(t *testing.T, conn *pgx.Conn) []int {
	t.Helper()
	rows, err := conn.Query(context.Background(), `SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

func TestOpen(t *testing.T) {
	ctx := context.Background()

	t.Run("PrimariesOpeningANewDatabaseTogetherMigrateItOnce", func(t *testing.T) {
		url := pgtest.NewDatabase(t)
		postgres.OpenTogether(t, url, 4)
		vs := versions(t, postgres.Connect(t, url))
		if len(vs) != postgres.SchemaVersion() || vs[len(vs)-1] != postgres.SchemaVersion() {
			t.Fatalf("schema_migrations %v, want 1..%d once each", vs, postgres.SchemaVersion())
		}
	})

	t.Run("ReopeningKeepsDataAndAppliesNothing", func(t *testing.T) {
		url := pgtest.NewDatabase(t)
		s, err := postgres.Open(ctx, url, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.EnqueueContinuation(ctx, store.NewContinuation{IdempotencyKey: "job/1", Channel: "room", Text: "x"}); err != nil {
			t.Fatal(err)
		}
		s.Close()
		s, err = postgres.Open(ctx, url, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		cs, err := s.PendingContinuations(ctx, 0, 10)
		if err != nil || len(cs) != 1 || cs[0].IdempotencyKey != "job/1" {
			t.Fatalf("after reopening: %v, %v", cs, err)
		}
		if vs := versions(t, postgres.Connect(t, url)); len(vs) != postgres.SchemaVersion() {
			t.Fatalf("schema_migrations %v after reopening", vs)
		}
	})

	t.Run("ADatabaseFromANewerPrimaryIsRefused", func(t *testing.T) {
		url := pgtest.NewDatabase(t)
		openDriver(t, url, postgres.Options{}).Close()
		if _, err := postgres.Connect(t, url).Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, 'future', 0)`,
			postgres.SchemaVersion()+1); err != nil {
			t.Fatal(err)
		}
		d, err := postgres.OpenDriver(ctx, url, postgres.Options{})
		if !errors.Is(err, store.ErrSchemaTooNew) {
			if d != nil {
				d.Close()
			}
			t.Fatalf("OpenDriver = %v, want ErrSchemaTooNew", err)
		}
	})

	t.Run("TheURLsPoolBoundWinsOverTheOption", func(t *testing.T) {
		url := pgtest.NewDatabase(t)
		if got := openDriver(t, url+"&pool_max_conns=3", postgres.Options{MaxConns: 7}).MaxConns(); got != 3 {
			t.Errorf("pool_max_conns=3: pool of %d", got)
		}
		if got := openDriver(t, url, postgres.Options{MaxConns: 7}).MaxConns(); got != 7 {
			t.Errorf("MaxConns 7 without pool_max_conns: pool of %d", got)
		}
	})

	t.Run("AMalformedURLIsRefusedWithoutItsPassword", func(t *testing.T) {
		_, err := postgres.OpenDriver(ctx, "postgres://ann:s3cret@localhost:notaport/db", postgres.Options{})
		if err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Fatalf("OpenDriver = %v, want an error that does not show the password", err)
		}
	})
}

func TestUpdate(t *testing.T) {
	ctx := context.Background()

	t.Run("ATransactionThatLosesASerializationRaceRunsAgain", func(t *testing.T) {
		d := openDriver(t, pgtest.NewDatabase(t), postgres.Options{})
		var id int64
		if err := d.Update(ctx, func(tx store.Tx) (err error) {
			id, _, err = tx.InsertContinuation(ctx, store.NewContinuation{IdempotencyKey: "k", Channel: "room", Text: "x"}, time.Now())
			return err
		}); err != nil {
			t.Fatal(err)
		}
		// Both transactions read before either writes, so the second to write cannot be
		// serialized after the first: PostgreSQL fails it, and the driver runs it again.
		var runs atomic.Int32
		var bothRead sync.WaitGroup
		bothRead.Add(2)
		count := func() error {
			return d.Update(ctx, func(tx store.Tx) error {
				if _, err := tx.PendingContinuations(ctx, 0, 0); err != nil {
					return err
				}
				if runs.Add(1) <= 2 {
					bothRead.Done()
					bothRead.Wait()
				}
				_, _, err := tx.CountContinuationDelivery(ctx, id)
				return err
			})
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Go(func() { errs[i] = count() })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("Update: %v", err)
		}
		if n := runs.Load(); n != 3 {
			t.Errorf("the transactions ran %d times, want 3 (one again)", n)
		}
		cs, err := d.PendingContinuations(ctx, 0, 0)
		if err != nil || len(cs) != 1 || cs[0].DeliveredCount != 2 {
			t.Fatalf("after both: %+v, %v; want 2 deliveries counted", cs, err)
		}
	})

	t.Run("AnErrorOfTheTransactionIsNotRetried", func(t *testing.T) {
		d := openDriver(t, pgtest.NewDatabase(t), postgres.Options{})
		runs := 0
		boom := errors.New("boom")
		if err := d.Update(ctx, func(store.Tx) error { runs++; return boom }); !errors.Is(err, boom) || runs != 1 {
			t.Fatalf("Update = %v after %d runs, want boom after 1", err, runs)
		}
	})
}
