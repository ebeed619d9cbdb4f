package testtk

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/turncli/turncli/internal/shellpriv"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction(shellpriv.SpawnerFunction))
}
