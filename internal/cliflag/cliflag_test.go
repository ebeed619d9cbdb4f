package cliflag

import (
	"flag"
	"io"
	"slices"
	"testing"
)

func TestParseInterspersed(t *testing.T) {
	for _, tc := range []struct {
		name       string
		args, want []string
		role       string
	}{
		{"FlagsAfterThePositional", []string{"add", "mia", "--role", "admin"}, []string{"add", "mia"}, "admin"},
		{"FlagsBeforeThePositional", []string{"--role", "member", "add", "mia"}, []string{"add", "mia"}, "member"},
		{"EverythingAfterADoubleDashIsPositional", []string{"add", "--", "--role"}, []string{"add", "--role"}, ""},
		{"ADashAloneIsPositional", []string{"-", "--role", "x"}, []string{"-"}, "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			role := fs.String("role", "", "")
			got, err := ParseInterspersed(fs, tc.args)
			if err != nil || !slices.Equal(got, tc.want) || *role != tc.role {
				t.Fatalf("got %q, role %q, err %v; want %q, role %q", got, *role, err, tc.want, tc.role)
			}
		})
	}
	t.Run("AnUnknownFlagIsAnError", func(t *testing.T) {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		if _, err := ParseInterspersed(fs, []string{"add", "--nope"}); err == nil {
			t.Fatal("no error")
		}
	})
}
