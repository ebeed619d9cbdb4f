package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/turncli/turncli/internal/cliflag"
)

// commands are mindroom-primary's subcommands, in the order its help lists them. (The agent
// subcommand is the agent_cli_bin/ launcher's fallback, not a person's: it is not listed.)
var commands = cliflag.Commands{
	{Name: "shell", Summary: "open a response on the running primary and an interactive Bash in a window of it"},
	{Name: "operators", Summary: "add, list and remove operators, the people who decide"},
	{Name: "version", Summary: "print the build and exit"},
	{Name: "help", Summary: "print this help, or a command's: mindroom-primary help shell"},
}

// printUsage is mindroom-primary --help: how it is run, its commands and its flags.
func printUsage(fs *flag.FlagSet) {
	w := fs.Output()
	fmt.Fprint(w, `Usage:
  mindroom-primary [flags]              run the primary
  mindroom-primary <command> [flags]

`)
	commands.Write(w)
	fmt.Fprint(w, "\nFlags:\n")
	fs.PrintDefaults()
}

// helpCommand is `mindroom-primary help [command]`: the primary's usage, or the command's.
func helpCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return run(ctx, []string{"--help"}, stdin, stdout, stderr)
	}
	if len(args) > 1 {
		fmt.Fprintf(stderr, "mindroom-primary help: one command at a time, not %q\n", args)
		return 2
	}
	switch args[0] {
	case "shell":
		return shellCommand(ctx, []string{"--help"}, stdin, stdout, stderr)
	case "operators":
		fmt.Fprintln(stdout, operatorsUsage)
		return 0
	case "version":
		fmt.Fprintln(stdout, "usage: mindroom-primary version\nPrints the build: module version, revision and Go version (as --version).")
		return 0
	case "help":
		fmt.Fprintln(stdout, "usage: mindroom-primary help [command]\nPrints mindroom-primary's help, or the command's.")
		return 0
	}
	_ = cliflag.UnknownCommand(stderr, "mindroom-primary", args[0], commands.Names())
	return 2
}
