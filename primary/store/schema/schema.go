// Package schema owns the store's one migration sequence, shared by SQLite and PostgreSQL:
// files migrations/NNNN_name.sql, versions 1, 2, 3… without gaps, applied in order by each
// driver in its own transactions and recorded in its schema_migrations table. A version is
// the same change on both databases, so a version number names one schema.
//
// A migration is written once, in the SQL both databases read, as a text/template. Where the
// databases differ it says so in one way, through the functions of its Dialect:
//
//	{{id}}                  an id column: INTEGER PRIMARY KEY AUTOINCREMENT | BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY
//	{{int64}}               a 64-bit integer (times, sizes, ids): INTEGER | BIGINT
//	{{bytes}}               bytes: BLOB | BYTEA
//	{{flag "col"}}          a boolean column, false by default
//	{{strict}}              after a CREATE TABLE: STRICT | nothing
//	{{json "col"}}          col as JSON, to pass to a JSON function: col | col::json
//	{{json_is "col" "kind"}} col is JSON text whose top level is kind (object, array)
//	{{json_valid "col"}}    col is JSON text
//	{{octets "col"}}        the length of text col in bytes
//	{{if postgres}}…{{end}} statements only PostgreSQL has (the leader lease, its indexes)
//	{{if not postgres}}…{{end}} statements only SQLite needs (rebuilding a table, which it
//	                        cannot ALTER)
//
// Everything else (TEXT, INTEGER for small counts, CHECK, partial and unique indexes, ALTER
// TABLE … ADD COLUMN) is written plainly. A file that has shipped is never edited in meaning;
// a change is the next file.
//
// Load reads files without expanding them; LoadFor expands them for one database.
package schema

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"text/template"
)

// Migration is one numbered schema change.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

//go:embed migrations/*.sql
var files embed.FS

// Files holds the store's migrations, migrations/NNNN_name.sql.
func Files() fs.FS { return files }

// Version is the newest version of the store's migrations.
func Version() int {
	ms, err := Load(files)
	if err != nil {
		return 0
	}
	return len(ms)
}

var fileName = regexp.MustCompile(`^([0-9]{4})_([a-z0-9_]+)\.sql$`)

// Load reads migrations/NNNN_name.sql from fsys, in version order; versions must run 1, 2,
// 3… without gaps or duplicates.
func Load(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, p := range names {
		m := fileName.FindStringSubmatch(path.Base(p))
		if m == nil {
			return nil, fmt.Errorf("store: migration file %q is not named NNNN_name.sql", p)
		}
		version, _ := strconv.Atoi(m[1])
		body, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: version, Name: m[2], SQL: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("store: migration versions must run 1, 2, 3…: found %04d at position %d", m.Version, i+1)
		}
	}
	return out, nil
}

// LoadFor reads the migrations of fsys as Load does and expands each for database d.
func LoadFor(fsys fs.FS, d Dialect) ([]Migration, error) {
	ms, err := Load(fsys)
	if err != nil {
		return nil, err
	}
	for i, m := range ms {
		if ms[i].SQL, err = d.expand(m); err != nil {
			return nil, err
		}
	}
	return ms, nil
}

// expand executes m's template with d's functions.
func (d Dialect) expand(m Migration) (string, error) {
	name := fmt.Sprintf("%04d_%s", m.Version, m.Name)
	t, err := template.New(name).Funcs(d.funcs()).Option("missingkey=error").Parse(m.SQL)
	if err != nil {
		return "", fmt.Errorf("store: migration %s: %w", name, err)
	}
	var out bytes.Buffer
	if err := t.Execute(&out, nil); err != nil {
		return "", fmt.Errorf("store: migration %s: %w", name, err)
	}
	return out.String(), nil
}
