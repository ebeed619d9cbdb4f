package client

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestClientIsStandardLibraryOnly enforces contract section 12: the mindroom-agent binary
// depends on the standard library, this package and internal/canonjson, nothing else.
func TestClientIsStandardLibraryOnly(t *testing.T) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./cmd/mindroom-agent")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const module = "github.com/turncli/turncli"
	allowed := func(pkg string) bool {
		return pkg == module+"/cmd/mindroom-agent" ||
			pkg == module+"/client" || strings.HasPrefix(pkg, module+"/client/") ||
			pkg == module+"/internal/canonjson"
	}
	var deps []string
	for _, pkg := range strings.Fields(string(out)) {
		deps = append(deps, pkg)
		if !allowed(pkg) {
			t.Errorf("mindroom-agent depends on %s; the client must use only the standard library", pkg)
		}
	}
	if !strings.Contains(strings.Join(deps, " "), module+"/client") {
		t.Fatalf("go list did not list the client: %q", out)
	}
}
