package testtk

import (
	"testing"

	"github.com/turncli/turncli/primary/catalog"
)

func TestDeferredToolkit(t *testing.T) {
	t.Run("IsDeferredAndNamedTestDeferred", func(t *testing.T) {
		var tk catalog.Toolkit = NewDeferred()
		if tk.Name() != "test_deferred" || !tk.Deferred() || tk.Description() == "" {
			t.Fatalf("Name=%q Deferred=%v Description=%q", tk.Name(), tk.Deferred(), tk.Description())
		}
	})
	t.Run("LoadsCountsEveryLoad", func(t *testing.T) {
		tk := NewDeferred()
		_ = tk.Name()
		_ = tk.Description()
		if n := tk.Loads(); n != 0 {
			t.Fatalf("Loads before Load = %d", n)
		}
		for want := 1; want <= 2; want++ {
			def, err := tk.Load(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(def.Functions) != 2 || def.Functions[0].Name != "ping" || def.Functions[1].Name != "add" {
				t.Fatalf("functions = %+v", def.Functions)
			}
			if n := tk.Loads(); n != want {
				t.Fatalf("Loads = %d, want %d", n, want)
			}
		}
	})

	tests := []struct {
		name     string
		function string
		args     string
		want     string
		wantErr  string
	}{
		{"PingPongs", "ping", `{}`, `{"pong":true}`, ""},
		{"AddSums", "add", `{"a":2,"b":-5}`, `{"sum":-3}`, ""},
		{"AddOfLargestOperandsIsExact", "add", `{"a":9007199254740991,"b":9007199254740991}`, `{"sum":18014398509481982}`, ""},
		{"AddRefusesFractions", "add", `{"a":1.5,"b":1}`, ``, `argument "a" must be an integer`},
		{"UnknownFunctionFails", "nope", `{}`, ``, "unknown function test_deferred.nope"},
	}
	tk := NewDeferred()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tk.Call(t.Context(), newCall(t, DeferredName, tc.function, tc.args))
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := canonical(t, res.Value); got != tc.want {
				t.Fatalf("value = %s, want %s", got, tc.want)
			}
		})
	}
	if n := tk.Loads(); n != 0 {
		t.Fatalf("calling loaded nothing, but Loads = %d", n)
	}
}
