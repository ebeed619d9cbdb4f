package memory_test

import (
	"testing"

	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/drivertest"
	"github.com/turncli/turncli/primary/store/memory"
)

// harness is one database; each Open is another driver on it, as another process's.
type harness struct{ db *memory.Database }

func (h harness) Open(*testing.T) store.Driver { return h.db.Open() }

func TestConformance(t *testing.T) {
	drivertest.RunConformanceTests(t, func(*testing.T) drivertest.Harness {
		return harness{db: memory.NewDatabase()}
	})
}
