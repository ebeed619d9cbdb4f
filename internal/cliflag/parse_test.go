package cliflag

import (
	"errors"
	"flag"
	"strings"
	"testing"
)

func newDaemonFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("mindroom-primary", flag.ContinueOnError)
	fs.String("grpc-listen", "127.0.0.1:7420", "gRPC API address")
	fs.String("state-dir", ".turncli", "state directory")
	fs.Duration("shell-timeout", 0, "default timeout of a Bash command")
	return fs
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name           string
		args           []string
		wantErr        error
		stdout, stderr string
	}{
		{"AKnownFlagParses", []string{"--grpc-listen", "127.0.0.1:0"}, nil, "", ""},
		{"AnUnknownFlagNamesTheNearest", []string{"--grpc-listn", "x"}, ErrReported, "",
			"mindroom-primary: unknown flag --grpc-listn; did you mean --grpc-listen?\nrun mindroom-primary --help for all flags\n"},
		{"ASingleDashIsTheSameFlag", []string{"-stat-dir=x"}, ErrReported, "",
			"mindroom-primary: unknown flag --stat-dir; did you mean --state-dir?\nrun mindroom-primary --help for all flags\n"},
		{"AFarFlagNamesNone", []string{"--verbose"}, ErrReported, "",
			"mindroom-primary: unknown flag --verbose\nrun mindroom-primary --help for all flags\n"},
		{"ABadValueIsOneLine", []string{"--shell-timeout", "soon"}, ErrReported, "",
			"mindroom-primary: invalid value \"soon\" for flag -shell-timeout: parse error\nrun mindroom-primary --help for all flags\n"},
		{"HelpPrintsTheUsageOnStdout", []string{"--help"}, flag.ErrHelp, "Usage of mindroom-primary:\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			err := Parse(newDaemonFlags(), tc.args, &stdout, &stderr)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("Parse = %v, want %v", err, tc.wantErr)
			}
			if !strings.HasPrefix(stdout.String(), tc.stdout) || (tc.stdout == "") != (stdout.Len() == 0) || stderr.String() != tc.stderr {
				t.Fatalf("stdout %q, stderr %q\nwant stdout starting %q, stderr %q", stdout.String(), stderr.String(), tc.stdout, tc.stderr)
			}
		})
	}
	t.Run("HelpUsesTheCommandsOwnUsage", func(t *testing.T) {
		fs := newDaemonFlags()
		var stdout, stderr strings.Builder
		fs.Usage = func() { fs.Output().Write([]byte("Usage: mindroom-primary [flags]\n")) }
		if err := Parse(fs, []string{"-h"}, &stdout, &stderr); !errors.Is(err, flag.ErrHelp) || stdout.String() != "Usage: mindroom-primary [flags]\n" || stderr.Len() != 0 {
			t.Fatalf("Parse = %v, stdout %q, stderr %q", err, stdout.String(), stderr.String())
		}
	})
}

func TestUnknownCommand(t *testing.T) {
	commands := []string{"shell", "operators", "version", "help"}
	for word, want := range map[string]string{
		"shel":   "mindroom-primary: unknown command \"shel\"; did you mean shell?\nrun mindroom-primary --help for its commands and flags\n",
		"deploy": "mindroom-primary: unknown command \"deploy\"\nrun mindroom-primary --help for its commands and flags\n",
	} {
		var stderr strings.Builder
		if err := UnknownCommand(&stderr, "mindroom-primary", word, commands); !errors.Is(err, ErrReported) || stderr.String() != want {
			t.Errorf("UnknownCommand(%q) = %v, %q; want %q", word, err, stderr.String(), want)
		}
	}
}
