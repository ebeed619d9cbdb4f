package main

import (
	"strings"
	"testing"
)

func TestHelpListsTheCommandsAndFlags(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		code, out, errOut := runCmd(args...)
		if code != 0 || errOut != "" {
			t.Fatalf("%q: exit %d, stderr %q", args, code, errOut)
		}
		for _, want := range []string{"Usage:\n  mindroom-primary [flags]", "\n  shell ", "\n  operators ", "\n  version ", "\n  help ",
			"\nFlags:\n", "\n  -grpc-listen string\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("%q: help lacks %q:\n%s", args, want, out)
			}
		}
	}
}

func TestHelpOfACommand(t *testing.T) {
	for cmd, want := range map[string]string{
		"shell":     "Usage of mindroom-primary shell:\n",
		"operators": "usage:\n  mindroom-primary operators add NAME",
		"version":   "usage: mindroom-primary version\n",
		"help":      "usage: mindroom-primary help [command]\n",
	} {
		code, out, errOut := runCmd("help", cmd)
		if code != 0 || errOut != "" || !strings.HasPrefix(out, want) {
			t.Errorf("help %s: exit %d, stdout %q, stderr %q; want 0 and stdout starting %q", cmd, code, out, errOut, want)
		}
	}
}

func TestUsageMistakesAreShortAndSuggest(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		stderr string
	}{
		{"UnknownFlag", []string{"--grpc-listn", "127.0.0.1:0"},
			"mindroom-primary: unknown flag --grpc-listn; did you mean --grpc-listen?\nrun mindroom-primary --help for all flags\n"},
		{"UnknownCommand", []string{"shel"},
			"mindroom-primary: unknown command \"shel\"; did you mean shell?\nrun mindroom-primary --help for its commands and flags\n"},
		{"HelpOfAnUnknownCommand", []string{"help", "operator"},
			"mindroom-primary: unknown command \"operator\"; did you mean operators?\nrun mindroom-primary --help for its commands and flags\n"},
		{"UnknownFlagOfACommand", []string{"shell", "--stat-dir", "x"},
			"mindroom-primary shell: unknown flag --stat-dir; did you mean --state-dir?\nrun mindroom-primary shell --help for all flags\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCmd(tc.args...)
			if code != 2 || out != "" || errOut != tc.stderr {
				t.Fatalf("exit %d, stdout %q, stderr %q\nwant 2 and stderr %q", code, out, errOut, tc.stderr)
			}
		})
	}
}
