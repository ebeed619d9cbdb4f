package primary

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/turncli/turncli/internal/shellhost"
	"github.com/turncli/turncli/primary/credentials"
	"github.com/turncli/turncli/primary/interaction"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/workerhub"
)

// wholeSections are the sections of Config that New hands whole to the component that owns
// them, by their path in Config: adding a knob to one touches the section and the code that
// reads it, never package primary. The exceptions are the fields assembly itself reads, each
// with its reason.
var wholeSections = []struct {
	path       string
	section    reflect.Type
	exceptions map[string]string
}{
	{"Shells", reflect.TypeFor[shellhost.Settings](), map[string]string{
		"Isolation": "the isolation is built (IsolationConfig.Build) before the shells: its status goes to the start line and /readyz, and the shells take what it built",
	}},
	{"Responses", reflect.TypeFor[response.Settings](), nil},
	{"Jobs", reflect.TypeFor[jobs.Settings](), nil},
	{"Interaction", reflect.TypeFor[interaction.Settings](), nil},
	{"Workers", reflect.TypeFor[WorkersConfig](), map[string]string{
		"Credentials": "a section of its own, handed whole to credentials.LoadWorkers",
		"Liveness":    "a section of its own, handed whole to the worker hub",
	}},
	{"Workers.Credentials", reflect.TypeFor[credentials.Workers](), nil},
	{"Workers.Liveness", reflect.TypeFor[workerhub.Liveness](), nil},
}

// configNames are what the primary's code calls its Config: cfg (also p.cfg, d.cfg) and c in
// Config's own methods.
var configNames = []string{"cfg", "c"}

// TestEnginesTakeTheirSectionsWhole reads the primary's source and fails where a field of a
// whole section is read (cfg.Responses.MaxOpen, p.cfg.Jobs.Grace), which would be a knob
// copied by hand into its engine; and where a listed exception is no longer read, so the list
// stays true.
func TestEnginesTakeTheirSectionsWhole(t *testing.T) {
	config := reflect.TypeFor[Config]()
	for _, s := range wholeSections {
		typ := config
		for _, name := range strings.Split(s.path, ".") {
			f, ok := typ.FieldByName(name)
			if !ok {
				typ = nil
				break
			}
			typ = f.Type
		}
		if typ != s.section {
			t.Errorf("Config.%s is not a %v: update wholeSections", s.path, s.section)
		}
		for name := range s.exceptions {
			if _, ok := s.section.FieldByName(name); !ok {
				t.Errorf("exception %s.%s names no field of %v", s.path, name, s.section)
			}
		}
	}

	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			chain := selectorChain(sel)
			for _, s := range wholeSections {
				path := strings.Split(s.path, ".")
				// chain ends with <config name>, the section's path, then the field read.
				base := len(chain) - len(path) - 2
				if base < 0 || !slices.Contains(configNames, chain[base]) || !slices.Equal(chain[base+1:len(chain)-1], path) {
					continue
				}
				field := chain[len(chain)-1]
				if _, isField := s.section.FieldByName(field); !isField {
					continue // a method of the section (BindFlags, Validate)
				}
				read := s.path + "." + field
				if _, excepted := s.exceptions[field]; excepted {
					used[read] = true
					continue
				}
				t.Errorf("%s: %s reads a field of a whole section: hand Config.%s whole to the component that owns it and read %s there",
					fset.Position(sel.Pos()), strings.Join(chain, "."), s.path, field)
			}
			return true
		})
	}
	for _, s := range wholeSections {
		for field, why := range s.exceptions {
			if !used[s.path+"."+field] {
				t.Errorf("exception %s.%s (%s) is read nowhere any more: remove it from wholeSections", s.path, field, why)
			}
		}
	}
}

// selectorChain is the names of a selector read from its root identifier (p.cfg.Jobs.Grace:
// p, cfg, Jobs, Grace); nil when the root is not an identifier (a call, an index).
func selectorChain(e ast.Expr) []string {
	switch e := e.(type) {
	case *ast.Ident:
		return []string{e.Name}
	case *ast.SelectorExpr:
		if x := selectorChain(e.X); x != nil {
			return append(x, e.Sel.Name)
		}
	}
	return nil
}
