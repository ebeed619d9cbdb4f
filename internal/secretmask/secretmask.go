// Package secretmask makes the copies of tool inputs and call arguments that people see and
// logs keep: values under secret-bearing keys, at any depth, and known secret values inside
// strings are replaced. The original is never changed.
package secretmask

import (
	"encoding/json"
	"strings"
	"unicode"
)

// Redacted replaces a secret in a copy people see, the store keeps or the logs show.
const Redacted = "(redacted)"

// secretKeyParts mark a key whose value is a secret, when its normalized form (lower case,
// without '_', '-' and spaces) contains one of them: "X-Auth-Token", "apiKey", "Api Key",
// "bearerToken", "clientSecret" and "DB_PASSWORD" all do.
var secretKeyParts = []string{"token", "secret", "password", "passwd", "apikey", "privatekey", "credential", "auth", "bearer"}

// Key reports whether a value under key k must be masked.
func Key(k string) bool {
	n := strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', ' ', '.', ':', '/':
			return -1
		}
		return unicode.ToLower(r)
	}, k)
	for _, part := range secretKeyParts {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}

// Mask returns a copy of v (a strict-JSON value: objects, arrays, strings, numbers,
// booleans, null) in which the value under every secret-bearing key, at any depth and
// whatever its type, is Redacted, and every occurrence of a known secret value (8 bytes or
// longer) in a string is Redacted too. v itself is not changed.
func Mask(v any, known []string) any { return MaskWith(v, Values(known)) }

// Values returns a function that replaces every occurrence of the known values (8 bytes or
// longer) in a string with Redacted.
func Values(known []string) func(string) string {
	return func(t string) string {
		for _, s := range known {
			if len(s) >= 8 {
				t = strings.ReplaceAll(t, s, Redacted)
			}
		}
		return t
	}
}

// MaskWith is Mask with every string passed through redact (a registry of live secrets)
// instead of searched for known values.
func MaskWith(v any, redact func(string) string) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			if Key(k) {
				out[k] = Redacted
			} else {
				out[k] = MaskWith(x, redact)
			}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = MaskWith(x, redact)
		}
		return out
	case string:
		return redact(t)
	default:
		return v
	}
}

// MaskJSON returns the masked copy of a JSON text (numbers kept as written). A text that is
// not JSON is returned whole as Redacted: it cannot be shown safely.
func MaskJSON(text string, known []string) string { return MaskJSONWith(text, Values(known)) }

// MaskJSONWith is MaskJSON with every string passed through redact.
func MaskJSONWith(text string, redact func(string) string) string {
	if text == "" {
		return ""
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return `"` + Redacted + `"`
	}
	b, err := json.Marshal(MaskWith(v, redact))
	if err != nil {
		return `"` + Redacted + `"`
	}
	return string(b)
}
