package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestNamesAToolkitDefinesArePrintable: toolkit and function names of printable characters
// are accepted; a control, format or non-ASCII space character refuses the definition.
func TestNamesAToolkitDefinesArePrintable(t *testing.T) {
	for _, tc := range []struct {
		test, name string
		valid      bool
	}{
		{"ASCIIPunctuation", "files.read-all_v2/x", true},
		{"ASCIISpace", "read file", true},
		{"Letters", "grüße日本", true},
		{"Symbol", "weather🙂", true},
		{"LongestName", strings.Repeat("é", MaxSelector), true},
		{"Empty", "", false},
		{"TooLong", strings.Repeat("a", MaxSelector+1), false},
		{"InvalidUTF8", "a\xffb", false},
		{"Bell", "ring\abell", false},
		{"Newline", "a\nb", false},
		{"Escape", "a\x1b[31mb", false},
		{"Delete", "a\x7fb", false},
		{"C1Control", "a\u0085b", false},
		{"BidiOverride", "txt.\u202eexe", false},
		{"ZeroWidthSpace", "a\u200bb", false},
		{"NoBreakSpace", "a\u00a0b", false},
	} {
		t.Run(tc.test, func(t *testing.T) {
			if got := ValidName(tc.name); got != tc.valid {
				t.Fatalf("ValidName(%q) = %v, want %v", tc.name, got, tc.valid)
			}
			fn := defToolkit{name: "tk", def: Definition{Functions: []Function{{Name: tc.name}}}}
			if err := NewRegistry().Register(context.Background(), fn); (err == nil) != tc.valid {
				t.Errorf("function named %q: Register = %v", tc.name, err)
			}
			if tc.name == "" || len(tc.name) > MaxSelector {
				return
			}
			tk := defToolkit{name: tc.name, def: Definition{Functions: []Function{{Name: "f"}}}}
			if err := NewRegistry().Register(context.Background(), tk); (err == nil) != tc.valid {
				t.Errorf("toolkit named %q: Register = %v", tc.name, err)
			}
		})
	}
}

// TestCheckFunctionAppliesTheRulesOfADefinitionToOneFunction: CheckFunction refuses exactly
// the functions that refuse a definition, and says which rule each breaks.
func TestCheckFunctionAppliesTheRulesOfADefinitionToOneFunction(t *testing.T) {
	for _, tc := range []struct {
		test string
		fn   Function
		want []error // nil: accepted
	}{
		{"Valid", Function{Name: "ok", InputSchema: json.RawMessage(`{"type":"object"}`)}, nil},
		{"NoSchema", Function{Name: "ok"}, nil},
		{"ControlCharacterInName", Function{Name: "ring\abell"}, []error{ErrInvalidName}},
		{"SchemaNotJSON", Function{Name: "f", InputSchema: json.RawMessage(`{"type":`)}, []error{ErrInvalidSchema}},
		{"SchemaThatDoesNotCompile", Function{Name: "f", InputSchema: json.RawMessage(`{"$ref":"#/$defs/missing"}`)}, []error{ErrInvalidSchema}},
		{"SchemaReferringOutside", Function{Name: "f", InputSchema: json.RawMessage(`{"$ref":"other.json"}`)}, []error{ErrInvalidSchema, ErrOutsideDocument}},
		{"SchemaTooDeep", Function{Name: "f", InputSchema: json.RawMessage(nestedSchema(MaxSchemaDepth + 1))}, []error{ErrInvalidSchema}},
		{"SchemaTooLarge", Function{Name: "f", InputSchema: json.RawMessage(paddedSchema(MaxSchemaBytes + 1))}, []error{ErrInvalidSchema}},
	} {
		t.Run(tc.test, func(t *testing.T) {
			err := CheckFunction("tk", tc.fn)
			for _, want := range tc.want {
				if !errors.Is(err, want) {
					t.Errorf("CheckFunction = %v, want %v", err, want)
				}
			}
			if tc.want == nil && err != nil {
				t.Errorf("CheckFunction = %v, want nil", err)
			}
			regErr := NewRegistry().Register(context.Background(), defToolkit{name: "tk", def: Definition{Functions: []Function{tc.fn}}})
			if (regErr == nil) != (err == nil) || (err != nil && regErr.Error() != err.Error()) {
				t.Errorf("Register = %v, CheckFunction = %v: they disagree", regErr, err)
			}
		})
	}
}
