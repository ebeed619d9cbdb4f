package interaction

import (
	"strings"
	"unicode"
)

// Redacted replaces a secret in the copy of a permission request that people see, the store
// keeps and the logs show.
const Redacted = "(redacted)"

// secretKeyParts mark a key whose value is a secret, when its normalized form (lower case,
// without '_', '-' and spaces) contains one of them: "X-Auth-Token", "apiKey", "Api Key",
// "bearerToken", "clientSecret" and "DB_PASSWORD" all do.
var secretKeyParts = []string{"token", "secret", "password", "passwd", "apikey", "privatekey", "credential", "auth", "bearer"}

// secretKey reports whether a value under key k must be masked.
func secretKey(k string) bool {
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

// maskSecrets returns a copy of v (a strict-JSON value: objects, arrays, strings, numbers,
// booleans, null) in which the value under every secret-bearing key, at any depth and
// whatever its type, is Redacted, and every occurrence of a known secret value (8 bytes or
// longer) in a string is Redacted too. v itself is not changed.
func maskSecrets(v any, known []string) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			if secretKey(k) {
				out[k] = Redacted
			} else {
				out[k] = maskSecrets(x, known)
			}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = maskSecrets(x, known)
		}
		return out
	case string:
		for _, s := range known {
			if len(s) >= 8 {
				t = strings.ReplaceAll(t, s, Redacted)
			}
		}
		return t
	default:
		return v
	}
}
