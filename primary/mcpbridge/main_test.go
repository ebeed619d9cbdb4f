package mcpbridge

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/turncli/turncli/internal/shellpriv"

	"github.com/turncli/turncli/internal/testmcp"
)

// serverBinary is the testmcp command, built once for the package's tests.
var serverBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcpbridge-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBinary, err = testmcp.BuildTo(dir)
	if err != nil {
		os.RemoveAll(dir)
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreAnyFunction(shellpriv.SpawnerFunction)); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
