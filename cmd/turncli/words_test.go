package main

import (
	"context"
	"strings"
	"testing"
)

// runWords runs the command line where no primary is: only what the words ask for is tested.
func runWords(t *testing.T, args ...string) result {
	t.Helper()
	var out, errOut strings.Builder
	code := run(context.Background(), append(args, "--state-dir", t.TempDir()), strings.NewReader(""), &out, &errOut)
	return result{code, out.String(), errOut.String()}
}

func TestMistypedCommandsGetTheNearestOne(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		stderr string
	}{
		{"ANoun", []string{"aprovals", "ls"},
			"turncli: unknown command \"aprovals\"; did you mean \"approvals\"?\nrun 'turncli help' for the list\n"},
		{"AVerb", []string{"approvals", "lss"},
			"turncli: unknown command \"approvals lss\"; did you mean \"approvals ls\"?\nrun 'turncli help approvals' for the list\n"},
		{"AVerbAfterASingularNoun", []string{"job", "lgos", "3"},
			"turncli: unknown command \"job lgos\"; did you mean \"jobs logs\"?\nrun 'turncli help jobs' for the list\n"},
		{"AHyphenatedNoun", []string{"call-aprovals"},
			"turncli: unknown command \"call-aprovals\"; did you mean \"call-approvals\"?\nrun 'turncli help' for the list\n"},
		{"TheHelpCommand", []string{"hlep"},
			"turncli: unknown command \"hlep\"; did you mean \"help\"?\nrun 'turncli help' for the list\n"},
		{"ANounToDescribe", []string{"help", "jbos"},
			"turncli: unknown command \"jbos\"; did you mean \"jobs\"?\nrun 'turncli help' for the list\n"},
		{"NothingNearIsSuggested", []string{"nonsense"},
			"turncli: unknown command \"nonsense\"\nrun 'turncli help' for the list\n"},
		{"ANounWithoutAListNeedsAVerb", []string{"modes"},
			"turncli: modes needs a verb: get, set\nrun 'turncli help modes' for the list\n"},
		{"GlobalFlagsAlone", []string{"--json"},
			"turncli: a command is required after the global flags\nrun 'turncli help' for the list\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runWords(t, tc.args...)
			if res.code != exitUsage || res.stderr != tc.stderr || res.stdout != "" {
				t.Fatalf("exit %d, stdout %q, stderr:\n%s\nwant exit 2, stderr:\n%s", res.code, res.stdout, res.stderr, tc.stderr)
			}
		})
	}
}

func TestHelpIsOnStdoutWhereverItIsAsked(t *testing.T) {
	all := "usage: turncli [flags] NOUN VERB [args] [flags]\n"
	jobs := "usage: turncli [flags] jobs VERB [args] [flags]\n\ncommands:\n" +
		"  jobs ls         list background jobs and agents, newest first\n" +
		"  jobs show ID    show one job with the tail of its log\n" +
		"  jobs logs ID    print a job's log; -f follows it until the job ends\n" +
		"  jobs cancel ID  stop a running job (TERM, then KILL)\n\n" +
		"\"jobs\" alone runs \"jobs ls\".\n\n" +
		"`turncli jobs VERB -h` describes one command; `turncli help` lists the global flags.\n"
	jobsLs := "usage: turncli jobs ls [flags]\n\nlist background jobs and agents, newest first\n"
	whoami := "usage: turncli whoami [flags]\n"
	for _, tc := range []struct {
		args []string
		// want is the whole output, or its first line(s) when exact is false.
		want  string
		exact bool
	}{
		{[]string{"help"}, all, false},
		{[]string{"-h"}, all, false},
		{[]string{"--help"}, all, false},
		{[]string{"help", "help"}, all, false},
		{[]string{"help", "version"}, all, false},
		{[]string{"help", "jobs"}, jobs, true},
		{[]string{"help", "job"}, jobs, true},
		{[]string{"jobs", "help"}, jobs, true},
		{[]string{"jobs", "--help"}, jobs, true},
		{[]string{"jobs", "-h"}, jobs, true},
		{[]string{"help", "jobs", "ls"}, jobsLs, false},
		{[]string{"jobs", "ls", "-h"}, jobsLs, false},
		{[]string{"jobs", "ls", "--status", "running", "--help"}, jobsLs, false},
		{[]string{"help", "whoami"}, whoami, false},
		{[]string{"whoami", "help"}, whoami, false},
		{[]string{"whoami", "-h"}, whoami, false},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			res := runWords(t, tc.args...)
			got := res.stdout
			if !tc.exact {
				got = got[:min(len(got), len(tc.want))]
			}
			if res.code != exitOK || res.stderr != "" || got != tc.want {
				t.Fatalf("exit %d, stderr %q, stdout:\n%s\nwant exit 0 and:\n%s", res.code, res.stderr, res.stdout, tc.want)
			}
		})
	}
	t.Run("TheWholeHelpListsEveryCommandOnce", func(t *testing.T) {
		out := runWords(t, "help").stdout
		for _, c := range commands {
			if n := strings.Count(out, "\n  "+c.name()+" "); n != 1 {
				t.Errorf("%q is listed %d times", c.name(), n)
			}
		}
	})
}

func TestNounsResolve(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		command string
		rest    []string
	}{
		{[]string{"jobs"}, "jobs ls", nil},
		{[]string{"job"}, "jobs ls", nil},
		{[]string{"job", "ls"}, "jobs ls", nil},
		{[]string{"jobs", "list"}, "jobs ls", nil},
		{[]string{"jobs", "--status", "running"}, "jobs ls", []string{"--status", "running"}},
		{[]string{"approval", "show", "3"}, "approvals show", []string{"3"}},
		{[]string{"call-approval", "deny", "3"}, "call-approvals deny", []string{"3"}},
		{[]string{"progress"}, "progress ls", nil},
		{[]string{"mode", "get"}, "modes get", nil},
		{[]string{"event"}, "events", nil},
		{[]string{"whoami", "--json"}, "whoami", []string{"--json"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r, werr := resolve(tc.args)
			if werr != nil || r.help || r.cmd.name() != tc.command || strings.Join(r.rest, " ") != strings.Join(tc.rest, " ") {
				t.Fatalf("resolve = %q %q help %v, %v; want %q %q", r.cmd.name(), r.rest, r.help, werr, tc.command, tc.rest)
			}
		})
	}
	t.Run("ProgressIsNotAPlural", func(t *testing.T) {
		if _, werr := resolve([]string{"progres"}); werr == nil {
			t.Fatal("progres names a noun")
		}
	})
}

func TestFailuresNameTheCommandWithOneSpace(t *testing.T) {
	res := runWords(t, "whoami", "--bogus")
	if want := "turncli whoami: flag provided but not defined: -bogus\nusage: turncli whoami [flags]\n"; res.code != exitUsage || !strings.HasPrefix(res.stderr, want) {
		t.Fatalf("exit %d, stderr %q", res.code, res.stderr)
	}
	res = runWords(t, "events")
	if want := "turncli events: no primary is serving on "; res.code != exitFailed || !strings.HasPrefix(res.stderr, want) {
		t.Fatalf("exit %d, stderr %q", res.code, res.stderr)
	}
}
