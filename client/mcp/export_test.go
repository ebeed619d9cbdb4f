package mcp

import "testing"

func TestExportedNamesAreTheServersNames(t *testing.T) {
	for _, tc := range []struct{ toolkit, function, want string }{
		{"test", "echo", "test__echo"},
		{"interaction", "permission_prompt", "permission_prompt"},
		{"my.toolkit", "f", hashedName(toolRef{"my.toolkit", "f"}, hashDigits)},
	} {
		var n Names
		name := n.Name(tc.toolkit, tc.function)
		if name != tc.want {
			t.Errorf("Name(%q, %q) = %q, want %q", tc.toolkit, tc.function, name, tc.want)
		}
		if tk, fn, ok := n.Lookup(name); !ok || tk != tc.toolkit || fn != tc.function {
			t.Errorf("Lookup(%q) = %q, %q, %v", name, tk, fn, ok)
		}
	}
	var fresh Names
	if _, _, ok := fresh.Lookup(hashedName(toolRef{"my.toolkit", "f"}, hashDigits)); ok {
		t.Error("a hashed name resolved before any Name gave it")
	}
}
