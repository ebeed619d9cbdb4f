package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/drivertest"
	"github.com/turncli/turncli/primary/store/sqlite"
)

func BenchmarkDriver(b *testing.B) {
	drivertest.RunBenchmarks(b, func(b *testing.B) store.Driver {
		d, err := sqlite.OpenDriver(context.Background(), filepath.Join(b.TempDir(), sqlite.FileName), sqlite.Options{})
		if err != nil {
			b.Fatalf("OpenDriver: %v", err)
		}
		return d
	})
}
