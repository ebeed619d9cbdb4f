package interaction

import (
	"reflect"
	"testing"

	"github.com/turncli/turncli/primary/secrets"
)

func TestSecretKey(t *testing.T) {
	for _, k := range []string{
		"token", "API_TOKEN", "apiKey", "api.key", "service:password", "auth/header", "api_key", "Api Key", "api-key", "APIKEY", "X-Auth-Token", "Authorization",
		"bearerToken", "Bearer", "password", "DB_PASSWORD", "passwd", "clientSecret", "client_secret", "credentials",
		"GOOGLE_APPLICATION_CREDENTIALS", "private_key", "oauth", "refresh-token",
	} {
		if !secretKey(k) {
			t.Errorf("%q is not taken for a secret-bearing key", k)
		}
	}
	for _, k := range []string{"cmd", "command", "path", "env", "name", "key", "keys", "description", "api", "notes", "count", "user"} {
		if secretKey(k) {
			t.Errorf("%q is taken for a secret-bearing key", k)
		}
	}
}

func TestMaskSecrets(t *testing.T) {
	t.Run("ValuesUnderSecretKeysAreMaskedAtAnyDepthWhateverTheirType", func(t *testing.T) {
		in := map[string]any{
			"cmd": "deploy",
			"env": map[string]any{"API_TOKEN": "t0k", "PATH": "/bin", "nested": map[string]any{"clientSecret": map[string]any{"a": "b"}}},
			"headers": []any{
				map[string]any{"X-Auth-Token": "abc", "Accept": "json"},
				map[string]any{"list": []any{map[string]any{"password": []any{"p1", "p2"}, "user": "ada"}}},
			},
			"apiKey":      12345,
			"Api Key":     nil,
			"bearerToken": true,
			"count":       3,
		}
		want := map[string]any{
			"cmd": "deploy",
			"env": map[string]any{"API_TOKEN": Redacted, "PATH": "/bin", "nested": map[string]any{"clientSecret": Redacted}},
			"headers": []any{
				map[string]any{"X-Auth-Token": Redacted, "Accept": "json"},
				map[string]any{"list": []any{map[string]any{"password": Redacted, "user": "ada"}}},
			},
			"apiKey":      Redacted,
			"Api Key":     Redacted,
			"bearerToken": Redacted,
			"count":       3,
		}
		if got := maskSecrets(in, secrets.New()); !reflect.DeepEqual(got, want) {
			t.Errorf("masked\n%v\nwant\n%v", got, want)
		}
		// The original is untouched: it is what an allow returns.
		if in["env"].(map[string]any)["API_TOKEN"] != "t0k" || in["headers"].([]any)[0].(map[string]any)["X-Auth-Token"] != "abc" {
			t.Errorf("the original was changed: %v", in)
		}
	})

	t.Run("NonSecretValuesAreKeptAsTheyAre", func(t *testing.T) {
		for _, v := range []any{nil, true, "text", 1.5, []any{"a", map[string]any{"path": "x"}}, map[string]any{}} {
			if got := maskSecrets(v, secrets.New()); !reflect.DeepEqual(got, v) {
				t.Errorf("maskSecrets(%v) = %v", v, got)
			}
		}
	})

	t.Run("KnownSecretValuesAreMaskedInsideAnyString", func(t *testing.T) {
		in := map[string]any{"cmd": "curl -H 'X: runtime-credential-123' host", "args": []any{"runtime-credential-123"}, "short": "abc"}
		want := map[string]any{"cmd": "curl -H 'X: (redacted)' host", "args": []any{"(redacted)"}, "short": "abc"}
		live := secrets.New()
		for _, v := range []string{"runtime-credential-123", "abc", ""} {
			live.Add(v)
		}
		if got := maskSecrets(in, live); !reflect.DeepEqual(got, want) {
			t.Errorf("masked %v, want %v (values shorter than 8 bytes are not masked)", got, want)
		}
	})
}
