package jobproc_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/turncli/turncli/internal/procsec"
	"github.com/turncli/turncli/internal/shellpriv"
)

// TestMain fails the package if a goroutine outlives the tests: supervision must end with its
// process (the shell spawner lives as long as the process). Like the binaries, it first keeps
// what the test process inherited from reaching the jobs it starts.
func TestMain(m *testing.M) {
	if err := procsec.CloseOnExecAbove2(); err != nil {
		panic(err)
	}
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction(shellpriv.SpawnerFunction))
}
