package bashexec

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/turncli/turncli/internal/shellpriv"
)

// TestMain fails the package if any goroutine is still running after the tests: Run must not
// leave a reader, waiter or stdin copier behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction(shellpriv.SpawnerFunction)) // lives as long as the process
}
