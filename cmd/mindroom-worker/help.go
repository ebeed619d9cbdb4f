package main

import (
	"flag"
	"fmt"
	"text/tabwriter"
)

// commands are mindroom-worker's subcommands, in the order its help lists them.
var commands = []struct{ name, summary string }{
	{"version", "print the build and exit"},
	{"help", "print this help"},
}

func commandNames() []string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return names
}

// printUsage is mindroom-worker --help: how it is run, its commands and its flags.
func printUsage(fs *flag.FlagSet) {
	w := fs.Output()
	fmt.Fprint(w, `Usage:
  mindroom-worker [flags]    run a worker: dial the primary and run its responses' commands
  mindroom-worker <command>

Commands:
`)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range commands {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.summary)
	}
	tw.Flush()
	fmt.Fprint(w, "\nFlags:\n")
	fs.PrintDefaults()
}
