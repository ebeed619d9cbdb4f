package bashexec

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/turncli/turncli/internal/shellpriv"
)

// TestMain fails the package if any goroutine is still running after the tests: Run must not
// leave a reader, waiter or stdin copier behind. Asked by TestNothingOutlivesAKilledParent, the
// binary instead runs one command and hangs until it is killed.
func TestMain(m *testing.M) {
	runChildIfAsked()
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction(shellpriv.SpawnerFunction)) // lives as long as the process
}

func t0() context.Context { return context.Background() }
