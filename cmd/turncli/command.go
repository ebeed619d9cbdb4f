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

// flagSet is the command's flags, the global ones (into g) among them, and what runs it.
func (c command) flagSet(g *globalFlags) (*flag.FlagSet, runner) {
	fs := flag.NewFlagSet("turncli "+c.name(), flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	g.register(fs)
	return fs, c.setup(fs)
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
	modeCommands, shellModeCommands, linkCommands, whoamiCommands,
)

// printHelp lists the commands of noun, or all of them and the global flags when noun is "".
func printHelp(w io.Writer, noun string) {
	if noun == "" {
		fmt.Fprintln(w, "usage: turncli [flags] NOUN VERB [args] [flags]")
		fmt.Fprintln(w, "\nThe operators' command line of a turncli primary.")
	} else {
		fmt.Fprintf(w, "usage: turncli [flags] %s VERB [args] [flags]\n", noun)
	}
	fmt.Fprintln(w, "\ncommands:")
	var rows [][]string
	for _, c := range commands {
		if noun == "" || c.noun == noun {
			rows = append(rows, []string{"  " + strings.TrimSpace(c.name()+" "+strings.Join(c.args, " ")), firstLine(c.summary)})
		}
	}
	if noun == "" {
		rows = append(rows, []string{"  version", "print turncli's version"}, []string{"  help [NOUN [VERB]]", "describe the commands, a noun's or one"})
	}
	writeColumns(w, rows)
	if noun != "" {
		if _, ok := commandOf(noun, "ls"); ok {
			fmt.Fprintf(w, "\n%q alone runs %q.\n", noun, noun+" ls")
		}
		fmt.Fprintf(w, "\n`turncli %s VERB -h` describes one command; `turncli help` lists the global flags.\n", noun)
		return
	}
	fmt.Fprintln(w, "\nA noun may be singular (job for jobs), and a noun alone lists its records (`turncli jobs`).")
	fmt.Fprintln(w, "`turncli help NOUN` lists a noun's commands; `turncli NOUN VERB -h` describes one.")
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
