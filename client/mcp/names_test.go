package mcp

import (
	"regexp"
	"strings"
	"testing"
)

var validToolName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func TestMCPToolNames(t *testing.T) {
	tests := []struct {
		name string
		ref  toolRef
		want string // "" when the name must be hashed
	}{
		{"ToolkitAndFunctionJoinWithTwoUnderscores", toolRef{"test", "echo"}, "test__echo"},
		{"UnderscoresAndHyphensInsideNamesStayReadable", toolRef{"test_deferred", "huge-schema_2"}, "test_deferred__huge-schema_2"},
		{"FunctionMayStartWithAnUnderscore", toolRef{"kit", "_private"}, "kit___private"},
		{"InteractionFunctionsKeepTheirBareNames", toolRef{"interaction", "permission_prompt"}, "permission_prompt"},
		{"ToolkitContainingTheSeparatorIsHashed", toolRef{"a__b", "c"}, ""},
		{"FunctionContainingTheSeparatorStaysNatural", toolRef{"a", "b__c"}, "a__b__c"},
		{"ToolkitEndingWithAnUnderscoreIsHashed", toolRef{"a_", "b"}, ""},
		{"ToolkitStartingWithAnUnderscoreIsHashed", toolRef{"_a", "b"}, ""},
		{"DottedToolkitIsHashed", toolRef{"mail.v2", "send"}, ""},
		{"NonASCIIFunctionIsHashed", toolRef{"wetter", "vorhersage_für_morgen"}, ""},
		{"SpaceIsHashed", toolRef{"kit", "do it"}, ""},
		{"InteractionFunctionContainingTheSeparatorIsHashed", toolRef{"interaction", "a__b"}, ""},
		{"InteractionFunctionStartingWithAnUnderscoreIsHashed", toolRef{"interaction", "_x"}, ""},
		{"NameOfSixtyFourCharactersStaysNatural", toolRef{strings.Repeat("k", 30), strings.Repeat("f", 32)}, strings.Repeat("k", 30) + "__" + strings.Repeat("f", 32)},
		{"NameOverSixtyFourCharactersIsHashed", toolRef{strings.Repeat("k", 30), strings.Repeat("f", 33)}, ""},
		{"SelectorOfOneHundredTwentyEightCharactersIsHashed", toolRef{"kit", strings.Repeat("é", 128)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var names toolNames
			got := names.name(tt.ref)
			if !validToolName.MatchString(got) {
				t.Fatalf("name %q is not [A-Za-z0-9_-]{1,64}", got)
			}
			if tt.want != "" {
				if got != tt.want {
					t.Fatalf("name = %q, want %q", got, tt.want)
				}
				if ref, ok := decodeName(got); !ok || ref != tt.ref {
					t.Fatalf("decodeName(%q) = %v, %v; want %v without any map", got, ref, ok, tt.ref)
				}
				return
			}
			if !strings.HasPrefix(got, "_") || got != hashedName(tt.ref, hashDigits) {
				t.Fatalf("name = %q, want the hashed name %q", got, hashedName(tt.ref, hashDigits))
			}
			if _, ok := decodeName(got); ok {
				t.Fatalf("hashed name %q decodes without the map", got)
			}
			if ref, ok := names.lookup(got); !ok || ref != tt.ref {
				t.Fatalf("lookup(%q) = %v, %v; want %v", got, ref, ok, tt.ref)
			}
			var fresh toolNames
			if again := fresh.name(tt.ref); again != got {
				t.Fatalf("another process names it %q, not %q", again, got)
			}
		})
	}

	t.Run("NamesThatCouldBeReadTwoWaysNeverCollide", func(t *testing.T) {
		var names toolNames
		refs := []toolRef{{"a__b", "c"}, {"a", "b__c"}, {"a_", "_b__c"}, {"a", "__b__c"}, {"interaction", "a__b__c"}}
		seen := map[string]toolRef{}
		for _, ref := range refs {
			n := names.name(ref)
			if other, dup := seen[n]; dup {
				t.Fatalf("%v and %v are both named %q", other, ref, n)
			}
			seen[n] = ref
		}
	})
	t.Run("HashCollisionGivesTheLaterFunctionALongerHash", func(t *testing.T) {
		var names toolNames
		ref := toolRef{"a__b", "c"}
		short := hashedName(ref, hashDigits)
		names.byName, names.byRef = map[string]toolRef{short: {"x", "y"}}, map[toolRef]string{{"x", "y"}: short}
		got := names.name(ref)
		if got != hashedName(ref, 2*hashDigits) || !validToolName.MatchString(got) {
			t.Fatalf("name = %q, want %q", got, hashedName(ref, 2*hashDigits))
		}
		if r, ok := names.lookup(got); !ok || r != ref {
			t.Fatalf("lookup = %v, %v", r, ok)
		}
	})
	t.Run("NamesNoFunctionCanHaveDoNotDecode", func(t *testing.T) {
		for _, n := range []string{"interaction__x", "_x", "_a__b_1234abcd", "bad name", "a_.b", "__x", ""} {
			if ref, ok := decodeName(n); ok {
				t.Errorf("decodeName(%q) = %v", n, ref)
			}
		}
	})
}
