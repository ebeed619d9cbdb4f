package slack

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a goroutine (a decision worker, a test server's) outlives the
// tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
