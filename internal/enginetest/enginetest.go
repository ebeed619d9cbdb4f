// Package enginetest finds the real engine CLIs (Claude Code and Codex, installed from npm)
// for tests that run them against a scripted model endpoint.
//
// A CLI is looked for in $TURNCLI_ENGINES_DIR/node_modules/.bin (where .ci/run installs the
// pinned versions), then on PATH. A test that needs one it cannot find is skipped, unless
// TURNCLI_REQUIRE_ENGINES=1, as in CI, where it fails.
package enginetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Claude returns the path of the claude CLI.
func Claude(t testing.TB) string { return find(t, "claude") }

// Codex returns the path of the codex CLI.
func Codex(t testing.TB) string { return find(t, "codex") }

func find(t testing.TB, name string) string {
	t.Helper()
	if dir := os.Getenv("TURNCLI_ENGINES_DIR"); dir != "" {
		// The real directory, not a link to it from a home the shells' user cannot enter.
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
		p := filepath.Join(dir, "node_modules", ".bin", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if os.Getenv("TURNCLI_REQUIRE_ENGINES") == "1" {
		t.Fatalf("the %s CLI is required (TURNCLI_REQUIRE_ENGINES=1) but is neither in $TURNCLI_ENGINES_DIR/node_modules/.bin nor on PATH", name)
	}
	t.Skipf("the %s CLI is not installed; set TURNCLI_ENGINES_DIR to where .ci/run installs it", name)
	return ""
}
