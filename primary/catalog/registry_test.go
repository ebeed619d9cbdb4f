package catalog

import (
	"context"
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
