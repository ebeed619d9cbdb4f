package cliflag

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// ErrReported is a command-line mistake Parse has already told on stderr; the program exits
// with status 2, as for any usage error.
var ErrReported = errors.New("command-line mistake reported")

// Parse parses args into fs, whose name is the command as typed ("mindroom-primary",
// "mindroom-primary shell"). -h or --help prints the whole usage (fs.Usage, writing to
// fs.Output()) on stdout and returns flag.ErrHelp. Any other mistake is two short lines on
// stderr instead of the flag package's whole usage: what is wrong, with the nearest defined
// flag when an unknown one is close to it, and the command that lists every flag; it returns
// ErrReported.
func Parse(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	usage := fs.Usage
	fs.Usage = func() {} // the flag package would print it on every mistake
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.Usage = usage
	fs.SetOutput(stdout)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		if usage == nil {
			usage = fs.PrintDefaults
		}
		usage() // flag.NewFlagSet's default names the command and lists the flags
		return flag.ErrHelp
	}
	fmt.Fprintf(stderr, "%s: %s\nrun %s --help for all flags\n", fs.Name(), explain(fs, err), fs.Name())
	return ErrReported
}

// undefinedFlag starts the flag package's error for a flag fs does not define; the flag's
// name follows it. (The package has no typed error; TestParse notices if the text changes.)
const undefinedFlag = "flag provided but not defined: -"

// explain is err in words for a person, with the nearest flag's name for an unknown flag.
func explain(fs *flag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), undefinedFlag)
	if !ok {
		return err.Error()
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if near, ok := Suggest(name, names); ok {
		return fmt.Sprintf("unknown flag --%s; did you mean --%s?", name, near)
	}
	return "unknown flag --" + name
}

// UnknownCommand tells on stderr that program has no command word, naming the nearest of
// commands when one is close, and returns ErrReported.
func UnknownCommand(stderr io.Writer, program, word string, commands []string) error {
	msg := fmt.Sprintf("%s: unknown command %q", program, word)
	if near, ok := Suggest(word, commands); ok {
		msg += fmt.Sprintf("; did you mean %s?", near)
	}
	fmt.Fprintf(stderr, "%s\nrun %s --help for its commands and flags\n", msg, program)
	return ErrReported
}
