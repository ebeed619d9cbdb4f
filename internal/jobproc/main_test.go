package jobproc_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/turncli/turncli/internal/shellpriv"
)

// TestMain fails the package if a goroutine outlives the tests: supervision must end with its
// process.
// The shell spawner lives as long as the process.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction(shellpriv.SpawnerFunction))
}
