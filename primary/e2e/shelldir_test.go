package e2e

import (
	"testing"

	"github.com/turncli/turncli/internal/shellpriv/shellprivtest"
)

// shellTempDir is a temporary directory the shell user (nobody, when the binaries run as root)
// may pass through: for state directories, built binaries and HOME of real processes.
func shellTempDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	shellprivtest.Reachable(t, dir)
	return dir
}
