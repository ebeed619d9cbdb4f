package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// command is one NOUN VERB of the CLI.
type command struct {
	noun, verb string
	// args is the positional arguments it takes; summary is its help line.
	args    arity
	summary string
	// setup registers the command's own flags and returns what runs it, with its positional
	// arguments.
	setup func(fs *flag.FlagSet) func(ctx context.Context, c *cli, args []string) error
}

// name is the command as it is typed: "jobs ls", or "whoami" for a noun without verbs, so
// that "turncli whoami: ..." has no space before its colon.
func (c command) name() string {
	if c.verb == "" {
		return c.noun
	}
	return c.noun + " " + c.verb
}

// arity is the positional arguments a command takes: their names, all required.
type arity []string

func (a arity) accepts(n int) bool { return n == len(a) }

func (a arity) describe() string {
	if len(a) == 0 {
		return "no arguments"
	}
	return strings.Join(a, " ")
}

func (c command) usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: turncli %s %s[flags]\n\n%s\n\nflags:\n", c.name(), argWords(c.args), c.summary)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

func argWords(a arity) string {
	if len(a) == 0 {
		return ""
	}
	return strings.Join(a, " ") + " "
}

// commands is every command, in the order help lists them.
var commands = slices.Concat(
	approvalCommands, callApprovalCommands, promptCommands, allowanceCommands, questionCommands,
	jobCommands, workerCommands, responseCommands, progressCommands, eventCommands, auditCommands,
	modeCommands, shellModeCommands, whoamiCommands,
)

// lookup finds the command args name ("jobs ls", or "whoami" alone) and returns the rest.
func lookup(args []string) (command, []string, bool) {
	for _, c := range commands {
		if c.noun != args[0] {
			continue
		}
		if c.verb == "" {
			return c, args[1:], true
		}
		if len(args) > 1 && (c.verb == args[1] || (c.verb == "ls" && args[1] == "list")) {
			return c, args[2:], true
		}
	}
	return command{}, nil, false
}

func printHelp(w io.Writer, args []string) {
	noun := ""
	if len(args) > 1 && (args[0] == "help" || args[0] == "-h" || args[0] == "--help") {
		noun = args[1]
	} else if len(args) == 1 && args[0] != "help" && args[0] != "-h" && args[0] != "--help" {
		noun = args[0]
	}
	fmt.Fprintln(w, "usage: turncli [flags] NOUN VERB [args] [flags]")
	fmt.Fprintln(w, "\nThe operators' command line of a turncli primary. `turncli NOUN VERB -h` describes one command.")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands {
		if noun != "" && c.noun != noun {
			continue
		}
		fmt.Fprintf(w, "  %-34s %s\n", strings.TrimSpace(c.name()+" "+strings.Join(c.args, " ")), firstLine(c.summary))
	}
	fmt.Fprintln(w, "  version                            print turncli's version")
	fmt.Fprintln(w, "\nglobal flags (before or after the command):")
	fs := flag.NewFlagSet("turncli", flag.ContinueOnError)
	var g globalFlags
	g.register(fs)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprintln(w, "\nexit codes: 0 done, 1 the primary refused or failed, 2 usage")
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func joinWords(args []string, n int) string {
	return strings.Join(args[:min(n, len(args))], " ")
}
