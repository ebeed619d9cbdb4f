package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/drivertest"
	"github.com/turncli/turncli/primary/store/sqlite"
)

// harness is one database file; each Open is another handle on it, as another process's.
type harness struct{ path string }

func (h harness) Open(t *testing.T) store.Driver {
	t.Helper()
	d, err := sqlite.OpenDriver(context.Background(), h.path, sqlite.Options{})
	if err != nil {
		t.Fatalf("OpenDriver: %v", err)
	}
	return d
}

func TestConformance(t *testing.T) {
	drivertest.RunConformanceTests(t, func(t *testing.T) drivertest.Harness {
		return harness{path: filepath.Join(t.TempDir(), sqlite.FileName)}
	})
}
