package jobproc_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a goroutine outlives the tests: supervision must end with its
// process.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
