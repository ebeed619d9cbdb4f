package schema_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/turncli/turncli/primary/store/schema"
)

func TestLoad(t *testing.T) {
	file := func(sql string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(sql)} }
	for _, tc := range []struct {
		name    string
		files   fstest.MapFS
		want    []string // name of each version in order
		wantErr string
	}{
		{"MigrationsComeInVersionOrder", fstest.MapFS{
			"migrations/0002_second.sql": file("B"), "migrations/0001_first.sql": file("A"),
		}, []string{"first", "second"}, ""},
		{"NoMigrationsIsAnEmptySchema", fstest.MapFS{}, nil, ""},
		{"AGapIsRefused", fstest.MapFS{
			"migrations/0001_first.sql": file("A"), "migrations/0003_third.sql": file("C"),
		}, nil, "found 0003 at position 2"},
		{"ADuplicateVersionIsRefused", fstest.MapFS{
			"migrations/0001_first.sql": file("A"), "migrations/0001_again.sql": file("B"),
		}, nil, "found 0001 at position 2"},
		{"ABadNameIsRefused", fstest.MapFS{"migrations/1_first.sql": file("A")}, nil, "not named NNNN_name.sql"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := schema.Load(tc.files)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Load = %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for i, m := range ms {
				if m.Version != i+1 {
					t.Errorf("migration %d has version %d", i, m.Version)
				}
				got = append(got, m.Name)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("names %v, want %v", got, tc.want)
			}
		})
	}
}
