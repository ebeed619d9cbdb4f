package secretmask

import "testing"

func TestMaskJSON(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"NestedSecretKeysAtAnyDepth", `{"env":{"API_TOKEN":"s3cr3t","list":[{"password":1}]},"cmd":"ls"}`,
			`{"cmd":"ls","env":{"API_TOKEN":"(redacted)","list":[{"password":"(redacted)"}]}}`},
		{"NumbersKeptAsWritten", `{"n":1.50,"big":12345678901234567890}`, `{"big":12345678901234567890,"n":1.50}`},
		{"KnownValueInsideAString", `{"note":"use known-secret-value here"}`, `{"note":"use (redacted) here"}`},
		{"NotJSONIsHiddenWhole", `{"broken"`, `"(redacted)"`},
		{"Empty", ``, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := MaskJSON(tc.in, []string{"known-secret-value"}); got != tc.want {
				t.Errorf("MaskJSON(%s) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}
