package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestEveryFlagStays: the primary's flags are bound by its configuration's sections now; each
// flag a deployment may pass is still there, and no other appeared unnoticed.
func TestEveryFlagStays(t *testing.T) {
	want := strings.Fields(`active-standby advertise-addr agent-binary agent-cli-listen agent-engine agent-engine-env agent-ids
		agent-job-ceiling agent-max-budget-usd agent-max-turns agent-report-grace call-approval-expiry decision-link-base decision-link-expiry disk-reserve
		enable-test-toolkit fast-call-budget
		grpc-listen grpc-max-connection-age grpc-max-connection-age-grace handshake-timeout http-listen
		idle-timeout isolation job-ceiling lease-renew lease-ttl log-format log-level matrix-card-bytes
		matrix-chunk-bytes matrix-device matrix-homeserver matrix-token-file matrix-user max-conns
		max-conns-per-address max-open-responses max-open-responses-per-credential mcp-config
		metrics-listen prompt-wait response-reap-every sandbox-cpu-weight sandbox-file-size
		sandbox-memory sandbox-open-files sandbox-processes sandbox-tmp-size shell-env-allow
		shell-max-timeout shell-timeout shell-user slack-api-url slack-card-bytes slack-chunk-bytes
		slack-queue slack-signing-secret-file slack-token-file state-dir store tls-cert tls-key version
		worker-credentials-dir worker-deadline-slack worker-keys worker-liveness-timeout
		worker-ping-interval workers-only workspaces-dir`)
	code, out, errOut := runCmd("--help")
	if code != 0 || errOut != "" {
		t.Fatalf("--help: exit %d, stderr %q", code, errOut)
	}
	var got []string
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`).FindAllStringSubmatch(out, -1) {
		got = append(got, m[1])
	}
	if !slices.Equal(got, want) {
		t.Fatalf("flags %q\nwant  %q", got, want)
	}
}

// flagSources are the directories whose code binds mindroom-primary's flags (this command and
// the packages owning the configuration's sections) and mindroom-worker's, which shares the
// shells' section.
var flagSources = []string{
	".", "../mindroom-worker", "../../primary", "../../primary/listen", "../../primary/ha", "../../primary/credentials",
	"../../primary/response", "../../primary/jobs", "../../primary/interaction", "../../primary/workerhub",
	"../../internal/shellhost", "../../internal/connlimit",
}

// numericFlag maps the flag.FlagSet methods that take a numeric default to that default's
// argument index.
var numericFlag = map[string]int{
	"DurationVar": 2, "IntVar": 2, "Int64Var": 2, "UintVar": 2, "Uint64Var": 2, "Float64Var": 2,
	"Duration": 1, "Int": 1, "Int64": 1, "Uint": 1, "Uint64": 1, "Float64": 1,
}

// TestNoFlagRepeatsALiteralDefault: a numeric flag's default is zero or names the default its
// section owns (d.PromptWait, response.DefaultMaxOpen), never a number written again beside
// the flag (60*time.Minute), which would drift from the section's.
func TestNoFlagRepeatsALiteralDefault(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	for _, dir := range flagSources {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v): the list of flag sources is out of date", dir, err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := parser.ParseFile(fset, path, src, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				at, ok := numericFlag[sel.Sel.Name]
				if !ok || len(call.Args) != at+2 {
					return true
				}
				if name, ok := call.Args[at-1].(*ast.BasicLit); !ok || name.Kind != token.STRING {
					return true // not a flag: its name comes just before the default
				}
				checked++
				if !namedOrZero(call.Args[at]) {
					t.Errorf("%s: flag %s has the default %s written in place; take it from its section's defaults",
						fset.Position(call.Pos()), call.Args[at-1].(*ast.BasicLit).Value, src[fset.Position(call.Args[at].Pos()).Offset:fset.Position(call.Args[at].End()).Offset])
				}
				return true
			})
		}
	}
	if checked < 20 {
		t.Fatalf("only %d numeric flags found: the check no longer sees the flags", checked)
	}
}

// namedOrZero says whether a default is the literal zero or a named value (an identifier, a
// field or constant of a package, or a call).
func namedOrZero(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.BasicLit:
		return e.Value == "0" || e.Value == "0.0"
	case *ast.Ident, *ast.SelectorExpr, *ast.CallExpr:
		return true
	}
	return false
}
