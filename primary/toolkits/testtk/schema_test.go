package testtk

import (
	"bytes"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/primary/catalog"
)

const draft2020 = "https://json-schema.org/draft/2020-12/schema"

// compile checks a function's schema as the registry does: strict JSON, then a JSON Schema
// compiler.
func compile(t *testing.T, toolkit string, f catalog.Function) *jsonschema.Schema {
	t.Helper()
	v, err := canonjson.Parse(f.InputSchema)
	if err != nil {
		t.Fatalf("%s.%s: schema is not strict JSON: %v", toolkit, f.Name, err)
	}
	obj, _ := v.(map[string]any)
	if obj["$schema"] != draft2020 || obj["type"] != "object" {
		t.Fatalf("%s.%s: schema must declare draft 2020-12 and type object: %s", toolkit, f.Name, f.InputSchema)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(f.InputSchema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	url := "turncli:///" + toolkit + "/" + f.Name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatalf("%s.%s: %v", toolkit, f.Name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s.%s: schema does not compile: %v", toolkit, f.Name, err)
	}
	return s
}

func loadAll(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	schemas := map[string]*jsonschema.Schema{}
	for _, tk := range []catalog.Toolkit{New(), NewDeferred()} {
		def, err := tk.Load(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range def.Functions {
			if f.Description == "" || strings.Contains(f.Description, "\n") {
				t.Errorf("%s.%s: description %q is not one line", tk.Name(), f.Name, f.Description)
			}
			schemas[tk.Name()+"."+f.Name] = compile(t, tk.Name(), f)
		}
	}
	return schemas
}

func TestEverySchemaCompilesAsDraft2020(t *testing.T) {
	if got := len(loadAll(t)); got != 13 {
		t.Fatalf("compiled %d schemas, want 13", got)
	}
}

func TestSchemasAcceptAndRefuse(t *testing.T) {
	schemas := loadAll(t)
	tests := []struct {
		name     string
		function string
		args     string
		valid    bool
	}{
		{"EchoAcceptsAnyProperties", "test.echo", `{"anything":[1,{"x":null}]}`, true},
		{"SleepNeedsSeconds", "test.sleep", `{}`, false},
		{"SleepRefusesOver600", "test.sleep", `{"seconds":601}`, false},
		{"SleepRefusesNegative", "test.sleep", `{"seconds":-1}`, false},
		{"SleepRefusesStrings", "test.sleep", `{"seconds":"1"}`, false},
		{"SleepRefusesUnknownKeys", "test.sleep", `{"seconds":1,"requester_id":"x"}`, false},
		{"FailMessageIsOptional", "test.fail", `{}`, true},
		{"LargeRefusesFractions", "test.large", `{"bytes":1.5}`, false},
		{"LargeRefusesOverOneMiB", "test.large", `{"bytes":1048577}`, false},
		{"LargeAcceptsOneMiB", "test.large", `{"bytes":1048576}`, true},
		{"GateRefusesEmptyName", "test.gate", `{"name":""}`, false},
		{"MediaTakesNoArguments", "test.media", `{"x":1}`, false},
		{"HugeSchemaAcceptsDocumentedOption", "test.huge_schema", `{"option_400":"v"}`, true},
		{"HugeSchemaRefusesUnknownOption", "test.huge_schema", `{"option_401":"v"}`, false},
		{"IdentityRefusesSpoofedIdentity", "test.identity", `{"agent":"someone"}`, false},
		{"AddNeedsBoth", "test_deferred.add", `{"a":1}`, false},
		{"AddRefusesBeyondSafeIntegers", "test_deferred.add", `{"a":9007199254740992,"b":0}`, false},
		{"AddAcceptsIntegers", "test_deferred.add", `{"a":1,"b":2}`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(tc.args))
			if err != nil {
				t.Fatal(err)
			}
			err = schemas[tc.function].Validate(inst)
			if (err == nil) != tc.valid {
				t.Fatalf("valid = %v, want %v (%v)", err == nil, tc.valid, err)
			}
		})
	}
}

func TestHugeSchemaExceeds32KiBOfCanonicalJSON(t *testing.T) {
	def, err := New().Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range def.Functions {
		if f.Name != "huge_schema" {
			continue
		}
		c, err := canonjson.Canonicalize(f.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		if len(c) <= 32<<10 {
			t.Fatalf("canonical schema is %d bytes, want more than 32768", len(c))
		}
		return
	}
	t.Fatal("no huge_schema function")
}
