package matrix_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a Listener's sync loop or a client's connection outlives the
// tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
