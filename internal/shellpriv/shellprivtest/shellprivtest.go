// Package shellprivtest prepares temporary directories for tests whose shells run as the shell
// user (nobody, when the tests run as root): t.TempDir() is private to the test's user, so a
// shell could neither enter nor write it.
//
// It is test support only; nothing in production imports it.
package shellprivtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turncli/turncli/internal/shellpriv"
)

// Dir is a new temporary directory inside directories anyone may pass through: a working
// directory for shells this test process starts, which run as its own user unless the test
// gives them another.
func Dir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	Reachable(t, dir)
	return dir
}

// Reachable lets the shell user pass through (not list) every directory from the system's
// temporary directory down to path, path included when it is a directory.
func Reachable(t testing.TB, path string) {
	t.Helper()
	root := filepath.Clean(os.TempDir())
	for p := filepath.Clean(path); strings.HasPrefix(p, root+string(filepath.Separator)); p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("shellprivtest: %v", err)
		}
		if !fi.IsDir() {
			continue
		}
		if err := os.Chmod(p, fi.Mode().Perm()|0o011); err != nil {
			t.Fatalf("shellprivtest: %v", err)
		}
	}
}

// BinaryDir is Dir for the shells of a primary or worker binary started by the test, which
// run as shellpriv.Default when it is root.
func BinaryDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	Reachable(t, dir)
	own(t, dir, shellpriv.Default())
	return dir
}

func own(t testing.TB, path string, u *shellpriv.User) {
	t.Helper()
	if u == nil {
		return
	}
	err := filepath.WalkDir(path, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(u.Uid), int(u.Gid))
	})
	if err != nil {
		t.Fatalf("shellprivtest: %v", err)
	}
}
