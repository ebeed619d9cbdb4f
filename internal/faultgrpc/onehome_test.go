package faultgrpc

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNoPrimaryPackageChoosesAStatusCode keeps the interceptor the one place a code is chosen:
// no Go file of primary/ makes a gRPC status with a code (status.Error, status.Errorf,
// status.New, status.FromContextError) or names a code (codes.X). Engines and adapters return
// fault errors; the interceptor maps them. Tests may read codes.
func TestNoPrimaryPackageChoosesAStatusCode(t *testing.T) {
	root := filepath.Join("..", "..", "primary")
	choose := regexp.MustCompile(`\bstatus\.(Error|Errorf|New|Newf|FromContextError)\(|\bcodes\.[A-Z]\w*`)
	// allowed names files (relative to the module root) that may, each with its reason.
	allowed := map[string]string{}
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "gen" || strings.HasPrefix(d.Name(), ".") {
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
		checked++
		rel, _ := filepath.Rel(filepath.Join("..", ".."), path)
		if _, ok := allowed[filepath.ToSlash(rel)]; ok {
			return nil
		}
		for _, loc := range choose.FindAllIndex(src, -1) {
			line := 1 + strings.Count(string(src[:loc[0]]), "\n")
			t.Errorf("%s:%d chooses a status code (%q): return a fault error and let the interceptor map it", rel, line, src[loc[0]:loc[1]])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("checked only %d files under %s; is the walk rooted right?", checked, root)
	}
}
