package postgres_test

import (
	"context"
	"os"
	"testing"

	"github.com/turncli/turncli/internal/pgtest"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/drivertest"
	"github.com/turncli/turncli/primary/store/postgres"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// harness is one database; each Open is another pool on it, as another primary's.
type harness struct{ url string }

func (h harness) Open(t *testing.T) store.Driver {
	t.Helper()
	d, err := postgres.OpenDriver(context.Background(), h.url, postgres.Options{})
	if err != nil {
		t.Fatalf("OpenDriver: %v", err)
	}
	return d
}

func TestConformance(t *testing.T) {
	drivertest.RunConformanceTests(t, func(t *testing.T) drivertest.Harness {
		return harness{url: pgtest.NewPreparedDatabase(t, "migrated", migrated)}
	})
}

// migrated prepares the template of the tests' databases: the schema, migrated.
func migrated(ctx context.Context, url string) error {
	d, err := postgres.OpenDriver(ctx, url, postgres.Options{})
	if err != nil {
		return err
	}
	return d.Close()
}
