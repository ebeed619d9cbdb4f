package schema_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/turncli/turncli/primary/store/schema"
)

func TestLoadFor(t *testing.T) {
	const body = `CREATE TABLE t (id {{id}}, at {{int64}}, b {{bytes}}, f {{flag "f"}},
  j TEXT CHECK {{json_is "j" "array"}} AND json_array_length({{json "j"}}) >= 1, v TEXT CHECK ({{json_valid "v"}}),
  k TEXT CHECK ({{octets "k"}} <= 8)) {{strict}};{{if postgres}} CREATE INDEX t_at ON t (at);{{end}}`
	for _, tc := range []struct {
		name    string
		dialect schema.Dialect
		want    string
	}{
		{"SQLite", schema.SQLite, `CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER, b BLOB, f INTEGER NOT NULL DEFAULT 0 CHECK (f IN (0, 1)),
  j TEXT CHECK (json_valid(j) AND json_type(j) = 'array') AND json_array_length(j) >= 1, v TEXT CHECK (json_valid(v)),
  k TEXT CHECK (length(CAST(k AS BLOB)) <= 8)) STRICT;`},
		{"PostgreSQL", schema.PostgreSQL, `CREATE TABLE t (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, at BIGINT, b BYTEA, f BOOLEAN NOT NULL DEFAULT false,
  j TEXT CHECK (json_typeof(j::json) = 'array') AND json_array_length(j::json) >= 1, v TEXT CHECK (json_typeof(v::json) IS NOT NULL),
  k TEXT CHECK (octet_length(k) <= 8)) ; CREATE INDEX t_at ON t (at);`},
	} {
		t.Run("EachFunctionIsSpelledFor"+tc.name, func(t *testing.T) {
			ms, err := schema.LoadFor(fstest.MapFS{"migrations/0001_t.sql": {Data: []byte(body)}}, tc.dialect)
			if err != nil {
				t.Fatal(err)
			}
			if ms[0].SQL != tc.want {
				t.Fatalf("expanded\n%s\nwant\n%s", ms[0].SQL, tc.want)
			}
		})
	}

	t.Run("AnUnknownFunctionNamesItsFile", func(t *testing.T) {
		_, err := schema.LoadFor(fstest.MapFS{"migrations/0001_t.sql": {Data: []byte(`CREATE TABLE t (x {{uuid}})`)}}, schema.SQLite)
		if err == nil || !strings.Contains(err.Error(), "migration 0001_t:") || !strings.Contains(err.Error(), `function "uuid" not defined`) {
			t.Fatalf("LoadFor = %v, want the file and the unknown function", err)
		}
	})

	t.Run("TheStoresMigrationsExpandForBoth", func(t *testing.T) {
		for _, d := range []schema.Dialect{schema.SQLite, schema.PostgreSQL} {
			ms, err := schema.LoadFor(schema.Files(), d)
			if err != nil {
				t.Fatal(err)
			}
			if len(ms) != schema.Version() {
				t.Fatalf("%d migrations, Version() = %d", len(ms), schema.Version())
			}
			for _, m := range ms {
				if strings.Contains(m.SQL, "{{") || strings.Contains(m.SQL, "}}") {
					t.Errorf("%04d_%s keeps a template action after expansion", m.Version, m.Name)
				}
			}
		}
	})
}
