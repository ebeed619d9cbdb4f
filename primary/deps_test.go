package primary

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The dependency rule of docs/ARCHITECTURE.md: adapters import engines, never the reverse,
// and only the composition root imports adapters.
const (
	module   = "github.com/turncli/turncli"
	root     = module + "/primary"
	adapters = root + "/api/"
	gen      = module + "/gen/"
)

// streamEngines serve a long-lived stream that is their own state: the connection of a worker
// (its commands, output and job reports) and of a tool host (its toolkits and calls). Their
// protocol is what they keep, so they read its messages themselves.
var streamEngines = map[string]bool{
	root + "/workerhub": true,
	root + "/toolhost":  true,
}

func TestEnginesNeverImportAdapters(t *testing.T) {
	for pkg, imports := range listImports(t) {
		isAdapter := strings.HasPrefix(pkg, adapters)
		isEngine := strings.HasPrefix(pkg, root+"/") && !isAdapter && pkg != root+"/e2e"
		for _, imp := range imports {
			switch {
			case strings.HasPrefix(imp, adapters) && pkg != root && !isAdapter:
				t.Errorf("%s imports the adapter %s; only %s may", pkg, imp, root)
			case isEngine && strings.HasPrefix(imp, gen) && !streamEngines[pkg]:
				t.Errorf("%s imports the API types %s; an engine speaks its own vocabulary, its adapter translates", pkg, imp)
			case strings.HasPrefix(pkg, module+"/internal/") && strings.HasPrefix(imp, root) && pkg != module+"/internal/testenv":
				t.Errorf("%s imports %s; a shared leaf imports no role", pkg, imp)
			}
		}
	}
}

// listImports maps every package of the module to its non-test imports within the module.
func listImports(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = filepath.Join("..")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	pkgs := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		var own []string
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, module+"/") {
				own = append(own, imp)
			}
		}
		pkgs[fields[0]] = own
	}
	if _, ok := pkgs[root+"/response"]; !ok || len(pkgs[root]) == 0 {
		t.Fatalf("go list did not list the primary and its engines: %q", out)
	}
	return pkgs
}
