package shelltk

import (
	"bytes"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/turncli/turncli/internal/canonjson"
)

// schemas compiles every function's schema as the registry does: strict JSON, then a JSON
// Schema compiler.
func schemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	def, err := New(Options{}).Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(def.Instructions) == 0 || !strings.Contains(def.Instructions[0], "calling command's window") {
		t.Fatalf("instructions = %q, want them to name the calling command's window", def.Instructions)
	}
	out := map[string]*jsonschema.Schema{}
	for _, f := range def.Functions {
		if f.Description == "" || strings.Contains(f.Description, "\n") {
			t.Errorf("%s: description %q is not one line", f.Name, f.Description)
		}
		v, err := canonjson.Parse(f.InputSchema)
		if err != nil {
			t.Fatalf("%s: schema is not strict JSON: %v", f.Name, err)
		}
		if obj, _ := v.(map[string]any); obj["$schema"] != "https://json-schema.org/draft/2020-12/schema" || obj["type"] != "object" {
			t.Fatalf("%s: schema must declare draft 2020-12 and type object", f.Name)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(f.InputSchema))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		url := "turncli:///shell/" + f.Name + ".json"
		if err := c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
		if out[f.Name], err = c.Compile(url); err != nil {
			t.Fatalf("%s: schema does not compile: %v", f.Name, err)
		}
	}
	return out
}

func TestSchemas(t *testing.T) {
	compiled := schemas(t)
	if len(compiled) != 3 {
		t.Fatalf("%d functions, want 3", len(compiled))
	}
	tests := []struct {
		name     string
		function string
		args     string
		valid    bool
	}{
		{"RunNeedsOnlyCommand", "run_shell_command", `{"command":"ls"}`, true},
		{"RunAcceptsAllFields", "run_shell_command", `{"command":"ls","timeout_seconds":3600,"wait_seconds":0}`, true},
		{"RunRefusesMissingCommand", "run_shell_command", `{}`, false},
		{"RunRefusesEmptyCommand", "run_shell_command", `{"command":""}`, false},
		{"RunRefusesOversizedCommand", "run_shell_command", `{"command":"` + strings.Repeat("x", 100_001) + `"}`, false},
		{"RunRefusesTimeoutBelowOneSecond", "run_shell_command", `{"command":"ls","timeout_seconds":0.5}`, false},
		{"RunRefusesWaitOver600", "run_shell_command", `{"command":"ls","wait_seconds":601}`, false},
		{"RunRefusesUnknownKeys", "run_shell_command", `{"command":"ls","cwd":"/"}`, false},
		{"CheckNeedsHandle", "check_shell_command", `{}`, false},
		{"CheckRefusesNonStringHandle", "check_shell_command", `{"handle":1}`, false},
		{"KillAcceptsHandle", "kill_shell_command", `{"handle":"h"}`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(tc.args))
			if err != nil {
				t.Fatal(err)
			}
			if err := compiled[tc.function].Validate(inst); (err == nil) != tc.valid {
				t.Fatalf("valid = %v, want %v (%v)", err == nil, tc.valid, err)
			}
		})
	}
}
