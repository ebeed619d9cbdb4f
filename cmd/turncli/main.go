// Command turncli is the operators' command line: it decides approvals, prompts and questions,
// follows jobs and events, and shows workers, responses and settings, through the primary's
// public OperatorService (the same API as the dashboard and curl, so the primary decides what
// each operator may do).
//
//	turncli [global flags] NOUN VERB [args] [flags]
//
// A noun may be singular (job), a noun alone runs its list (turncli jobs = turncli jobs ls), and
// help is answered wherever it is asked (help NOUN VERB, NOUN help, -h after any command). A
// mistyped noun or verb is answered with the nearest one.
//
// It finds the primary and the operator credential from flags, then the environment, then the
// endpoints.json of a primary's state directory. It prints tables by default and protojson with
// --json. Exit codes: 0 done, 1 the primary refused or failed (its message printed), 2 usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/turncli/turncli/internal/buildinfo"
	"github.com/turncli/turncli/internal/cliflag"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Exit codes.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

// usageError is a mistake in the command line: its message, and then the command's usage,
// are printed and the command exits 2.
type usageError string

func (e usageError) Error() string { return string(e) }

func usagef(format string, a ...any) error { return usageError(fmt.Sprintf(format, a...)) }

// wordMistake prints a command line that names no command: what is wrong, and where the
// commands are listed; the whole usage would bury the one line that matters.
func wordMistake(stderr io.Writer, e *wordError) int {
	fmt.Fprintf(stderr, "turncli: %s\n%s\n", e.msg, e.hint())
	return exitUsage
}

// run is the whole command, with its streams, for tests.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && (buildinfo.IsVersionFlag(args[0]) || args[0] == "version") {
		fmt.Fprintln(stdout, buildinfo.Read().Line("turncli"))
		return exitOK
	}
	if len(args) == 0 {
		printHelp(stdout, "")
		return exitUsage
	}
	// Global flags may come before the command too (`turncli --json jobs ls`): they are
	// parsed with the command's own flags, after its words.
	var lead []string
	if strings.HasPrefix(args[0], "-") && !isHelp(args[0]) {
		pre := flag.NewFlagSet("turncli", flag.ContinueOnError)
		pre.SetOutput(io.Discard)
		var g globalFlags
		g.register(pre)
		if err := pre.Parse(args); err != nil || pre.NArg() == 0 {
			return wordMistake(stderr, &wordError{msg: "a command is required after the global flags"})
		}
		lead, args = args[:len(args)-pre.NArg()], pre.Args()
	}
	req, werr := resolve(args)
	if werr != nil {
		return wordMistake(stderr, werr)
	}
	c := &cli{stdin: stdin, stdout: stdout, stderr: stderr}
	if req.help && req.cmd.setup == nil {
		printHelp(stdout, req.noun)
		return exitOK
	}
	cmd := req.cmd
	fs, run := cmd.flagSet(&c.global)
	if req.help {
		cmd.usage(stdout, fs)
		return exitOK
	}
	positional, err := cliflag.ParseInterspersed(fs, append(lead, req.rest...))
	if errors.Is(err, flag.ErrHelp) {
		cmd.usage(stdout, fs)
		return exitOK
	}
	if err == nil && !cmd.args.accepts(len(positional)) {
		err = fmt.Errorf("%s takes %s", cmd.name(), cmd.args.describe())
	}
	if err != nil {
		fmt.Fprintf(stderr, "turncli %s: %v\n", cmd.name(), err)
		cmd.usage(stderr, fs)
		return exitUsage
	}
	if err := run(ctx, c, positional); err != nil {
		if errors.As(err, new(usageError)) {
			fmt.Fprintf(stderr, "turncli %s: %v\n", cmd.name(), err)
			cmd.usage(stderr, fs)
			return exitUsage
		}
		fmt.Fprintf(stderr, "turncli %s: %s\n", cmd.name(), describe(err))
		return exitFailed
	}
	return exitOK
}
