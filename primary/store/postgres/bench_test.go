package postgres_test

import (
	"context"
	"testing"

	"github.com/turncli/turncli/internal/pgtest"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/drivertest"
	"github.com/turncli/turncli/primary/store/postgres"
)

// BenchmarkDriver runs on a migrated database of the shared cluster, skipped as the
// conformance tests are when no server can start.
func BenchmarkDriver(b *testing.B) {
	drivertest.RunBenchmarks(b, func(b *testing.B) store.Driver {
		d, err := postgres.OpenDriver(context.Background(), pgtest.NewPreparedDatabase(b, "migrated", migrated), postgres.Options{})
		if err != nil {
			b.Fatalf("OpenDriver: %v", err)
		}
		return d
	})
}
