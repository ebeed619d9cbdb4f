package bashexec

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any goroutine is still running after the tests: Run must not
// leave a reader, waiter or stdin copier behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
