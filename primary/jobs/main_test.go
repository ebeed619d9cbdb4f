package jobs

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/turncli/turncli/internal/shellpriv"
)

// TestMain fails the package if a supervisor goroutine outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction(shellpriv.SpawnerFunction))
}
