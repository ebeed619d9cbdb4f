package main

import (
	"flag"
	"fmt"

	"github.com/turncli/turncli/internal/cliflag"
)

// commands are mindroom-worker's subcommands, in the order its help lists them.
var commands = cliflag.Commands{
	{Name: "version", Summary: "print the build and exit"},
	{Name: "help", Summary: "print this help"},
}

// printUsage is mindroom-worker --help: how it is run, its commands and its flags.
func printUsage(fs *flag.FlagSet) {
	w := fs.Output()
	fmt.Fprint(w, `Usage:
  mindroom-worker [flags]    run a worker: dial the primary and run its responses' commands
  mindroom-worker <command>

`)
	commands.Write(w)
	fmt.Fprint(w, "\nFlags:\n")
	fs.PrintDefaults()
}
