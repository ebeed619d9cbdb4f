package schema

import (
	"fmt"
	"text/template"
)

// Dialect is a database the migrations are expanded for.
type Dialect int

const (
	SQLite Dialect = iota + 1
	PostgreSQL
)

// funcs are the template functions of the package doc, spelled for d.
func (d Dialect) funcs() template.FuncMap {
	pg := d == PostgreSQL
	pick := func(sqlite, postgres string) func() string {
		if pg {
			return func() string { return postgres }
		}
		return func() string { return sqlite }
	}
	return template.FuncMap{
		"postgres": func() bool { return pg },
		"id":       pick("INTEGER PRIMARY KEY AUTOINCREMENT", "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"),
		"int64":    pick("INTEGER", "BIGINT"),
		"bytes":    pick("BLOB", "BYTEA"),
		"strict":   pick("STRICT", ""),
		"flag": func(col string) string {
			if pg {
				return "BOOLEAN NOT NULL DEFAULT false"
			}
			return fmt.Sprintf("INTEGER NOT NULL DEFAULT 0 CHECK (%s IN (0, 1))", col)
		},
		"json": func(col string) string {
			if pg {
				return col + "::json"
			}
			return col
		},
		"json_is": func(col, kind string) string {
			if pg {
				return fmt.Sprintf("(json_typeof(%s::json) = '%s')", col, kind)
			}
			return fmt.Sprintf("(json_valid(%s) AND json_type(%s) = '%s')", col, col, kind)
		},
		"json_valid": func(col string) string {
			if pg {
				return fmt.Sprintf("json_typeof(%s::json) IS NOT NULL", col)
			}
			return fmt.Sprintf("json_valid(%s)", col)
		},
		"octets": func(col string) string {
			if pg {
				return fmt.Sprintf("octet_length(%s)", col)
			}
			return fmt.Sprintf("length(CAST(%s AS BLOB))", col)
		},
	}
}
