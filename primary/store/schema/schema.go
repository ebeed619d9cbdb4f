// Package schema reads a store driver's numbered migrations: files migrations/NNNN_name.sql
// embedded in the driver, versions 1, 2, 3… without gaps. It owns that naming and numbering
// rule only; each driver applies its migrations in its own SQL and records them in its own
// schema_migrations table.
package schema

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
)

// Migration is one numbered schema change.
type Migration struct {
	Version int
	Name    string
	SQL     string
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
