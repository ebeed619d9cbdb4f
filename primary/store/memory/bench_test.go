package memory_test

import (
	"testing"

	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/drivertest"
	"github.com/turncli/turncli/primary/store/memory"
)

func BenchmarkDriver(b *testing.B) {
	drivertest.RunBenchmarks(b, func(*testing.B) store.Driver { return memory.New() })
}
