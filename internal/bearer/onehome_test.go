package bearer

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNoOtherPackageParsesBearerCredentials keeps this package the one home of the rule:
// no other Go file of the module reads a "Bearer " prefix off a value. (Writing one, as
// clients do, is fine; the stdlib-only client has its own and parses none.)
func TestNoOtherPackageParsesBearerCredentials(t *testing.T) {
	root := filepath.Join("..", "..")
	parse := regexp.MustCompile(`(CutPrefix|TrimPrefix|HasPrefix|EqualFold)\([^\n]*"(?i:bearer) "`)
	self, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if abs, _ := filepath.Abs(path); abs == self || d.Name() == "gen" || strings.HasPrefix(d.Name(), ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if loc := parse.FindIndex(src); loc != nil {
			t.Errorf("%s parses a bearer credential (%q): use package bearer", path, src[loc[0]:loc[1]])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
