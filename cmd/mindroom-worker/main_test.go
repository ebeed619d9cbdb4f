package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/turncli/turncli/internal/shellhost"
)

// runCmd runs the worker's command line in-process and returns its exit code and output.
func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	// Only what the test gives: no credential, key or address from the environment it runs in.
	for _, name := range []string{"MINDROOM_WORKER_CREDENTIAL", "MINDROOM_WORKER_CREDENTIAL_FILE", "MINDROOM_WORKER_KEY", "MINDROOM_PRIMARY_ADDR"} {
		t.Setenv(name, "")
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestHelpListsTheCommandsAndFlags(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help"}} {
		code, out, errOut := runCmd(t, args...)
		if code != 0 || errOut != "" {
			t.Fatalf("%q: exit %d, stderr %q", args, code, errOut)
		}
		for _, want := range []string{"Usage:\n  mindroom-worker [flags]", "\n  version ", "\n  help ", "\nFlags:\n", "\n  -credential-file string\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("%q: help lacks %q:\n%s", args, want, out)
			}
		}
	}
}

func TestUsageMistakesAreShortAndSuggest(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		stderr string
	}{
		{"UnknownFlag", []string{"--primray", "127.0.0.1:7420"},
			"mindroom-worker: unknown flag --primray; did you mean --primary?\nrun mindroom-worker --help for all flags\n"},
		{"UnknownCommand", []string{"versoin"},
			"mindroom-worker: unknown command \"versoin\"; did you mean version?\nrun mindroom-worker --help for its commands and flags\n"},
		{"ArgumentAfterTheFlags", []string{"--key", "k", "extra"},
			"mindroom-worker: unexpected argument \"extra\"\nrun mindroom-worker --help for all flags\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCmd(t, tc.args...)
			if code != 2 || out != "" || errOut != tc.stderr {
				t.Fatalf("exit %d, stdout %q, stderr %q\nwant 2 and stderr %q", code, out, errOut, tc.stderr)
			}
		})
	}
}

func TestAWorkerWithoutACredentialNamesWhereToGiveIt(t *testing.T) {
	code, out, errOut := runCmd(t, "--key", "local", "--id", "w1")
	if code != 2 || out != "" || errOut != noCredential {
		t.Fatalf("exit %d, stdout %q, stderr %q\nwant 2 and %q", code, out, errOut, noCredential)
	}
	for _, name := range []string{"--credential-file", "MINDROOM_WORKER_CREDENTIAL_FILE", "MINDROOM_WORKER_CREDENTIAL "} {
		if !strings.Contains(strings.ReplaceAll(noCredential, "\n", " "), name) {
			t.Errorf("the message does not name %s", name)
		}
	}

	empty := filepath.Join(t.TempDir(), "local.token")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runCmd(t, "--key", "local", "--id", "w1", "--credential-file", empty)
	if want := "mindroom-worker: the credential file " + empty + " is empty\n"; code != 2 || errOut != want {
		t.Fatalf("empty file: exit %d, stderr %q; want 2 and %q", code, errOut, want)
	}
}

// The shells' flags are the shells section's, the primary's own: the same names and defaults,
// and a mistake in them is a usage mistake said before anything starts.
func TestTheShellFlagsAreTheShellsSection(t *testing.T) {
	credential := filepath.Join(t.TempDir(), "key.token")
	if err := os.WriteFile(credential, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCmd(t, "--key", "local", "--id", "w1", "--credential-file", credential, "--shell-timeout", "-1s")
	if want := "mindroom-worker: shell timeouts and grace cannot be negative\n"; code != 2 || errOut != want {
		t.Fatalf("a negative timeout: exit %d, stderr %q; want 2 and %q", code, errOut, want)
	}
	// Every flag of the section is the worker's, with the section's default.
	section := flag.NewFlagSet("section", flag.ContinueOnError)
	var s shellhost.Settings
	s.BindFlags(section)
	_, help, _ := runCmd(t, "--help")
	section.VisitAll(func(f *flag.Flag) {
		if !strings.Contains(help, "\n  -"+f.Name+" ") && !strings.Contains(help, "\n  -"+f.Name+"\n") {
			t.Errorf("--help lacks --%s", f.Name)
		}
		if f.DefValue != "" && f.DefValue != "[]" && !strings.Contains(help, "(default "+f.DefValue+")") &&
			!strings.Contains(help, "(default "+strconv.Quote(f.DefValue)+")") {
			t.Errorf("--help lacks --%s's default %s", f.Name, f.DefValue)
		}
	})
	if want := "(default " + shellhost.DefaultCommandTimeout.String() + ")"; !strings.Contains(help, want) {
		t.Errorf("--help lacks the shell timeout's default %s", want)
	}
}
