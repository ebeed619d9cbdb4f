package client

import (
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"SubcommandPrintsTheBuildWithoutEnvironment", []string{"version"}, ExitCompleted},
		{"FlagPrintsTheBuildWithoutEnvironment", []string{"--version"}, ExitCompleted},
		{"ArgumentsAreInvalid", []string{"version", "extra"}, ExitInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := runCLI(t, nil, "", tc.args...)
			if o.code != tc.code {
				t.Fatalf("exit %d, want %d (stdout %q, stderr %q)", o.code, tc.code, o.stdout, o.stderr)
			}
			if tc.code == ExitCompleted && (!strings.HasPrefix(o.stdout, "mindroom-agent ") || !strings.Contains(o.stdout, " go1.") ||
				strings.Count(o.stdout, "\n") != 1) {
				t.Fatalf("stdout %q is not one version line", o.stdout)
			}
		})
	}
}
