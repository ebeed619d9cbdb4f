package client

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestClientIsStandardLibraryOnly enforces contract section 12: the mindroom-agent binary, this
// package and its subpackages (client/mcp) depend on the standard library, the client packages,
// internal/canonjson and internal/buildinfo (both standard-library only, which this test checks
// too, since their own imports are listed), nothing else.
func TestClientIsStandardLibraryOnly(t *testing.T) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./cmd/mindroom-agent", "./client/...")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const module = "github.com/turncli/turncli"
	allowed := func(pkg string) bool {
		return pkg == module+"/cmd/mindroom-agent" ||
			pkg == module+"/client" || strings.HasPrefix(pkg, module+"/client/") ||
			pkg == module+"/internal/canonjson" || pkg == module+"/internal/buildinfo"
	}
	var deps []string
	for _, pkg := range strings.Fields(string(out)) {
		deps = append(deps, pkg)
		if !allowed(pkg) {
			t.Errorf("mindroom-agent or a client package depends on %s; the client must use only the standard library", pkg)
		}
	}
	for _, want := range []string{module + "/client", module + "/client/mcp"} {
		if !slices.Contains(deps, want) {
			t.Fatalf("go list did not list %s: %q", want, out)
		}
	}
}
