package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/turncli/turncli/internal/cliflag"
)

// The words of a command line: the command they name, whether they ask for help, and the
// nearest command when they name none.

// isHelp reports whether a word asks for help where a noun or a verb may stand.
func isHelp(word string) bool { return word == "help" || word == "-h" || word == "--help" }

// request is what the words of a command line ask for.
type request struct {
	// cmd is the command to run, or to describe with help; when it is unset, help lists the
	// commands of noun ("" for all of them).
	cmd  command
	noun string
	help bool
	// rest is the words after the command: its arguments and flags.
	rest []string
}

// wordError is a command line whose words name no command: what is wrong, and the noun whose
// help lists the commands they could have meant ("" for all).
type wordError struct{ msg, noun string }

// hint is the line that follows the error.
func (e *wordError) hint() string {
	return fmt.Sprintf("run '%s' for the list", strings.TrimSpace("turncli help "+e.noun))
}

// resolve reads the command args name. A noun may be singular, a noun alone runs its list,
// "list" is "ls", and help may come first (`help jobs ls`), after a noun, or as -h anywhere.
func resolve(args []string) (request, *wordError) {
	if isHelp(args[0]) {
		return resolveHelp(args[1:])
	}
	noun, ok := nounOf(args[0])
	if !ok {
		return request{}, unknown(args[0], "", append(nouns(), "help", "version"), "")
	}
	if c, ok := commandOf(noun, ""); ok { // a noun without verbs is itself the command
		return request{cmd: c, help: len(args) > 1 && isHelp(args[1]), rest: args[1:]}, nil
	}
	switch {
	case len(args) > 1 && isHelp(args[1]):
		return request{noun: noun, help: true}, nil
	case len(args) == 1 || strings.HasPrefix(args[1], "-"):
		if c, ok := commandOf(noun, "ls"); ok {
			return request{cmd: c, rest: args[1:]}, nil
		}
		return request{}, &wordError{fmt.Sprintf("%s needs a verb: %s", noun, strings.Join(verbs(noun), ", ")), noun}
	}
	verb := args[1]
	if verb == "list" {
		verb = "ls"
	}
	if c, ok := commandOf(noun, verb); ok {
		return request{cmd: c, rest: args[2:]}, nil
	}
	return request{}, unknown(args[0]+" "+args[1], noun+" ", verbs(noun), noun)
}

// resolveHelp reads what `help WORDS` asks to describe: the words before any flag name all
// commands, a noun's or one command.
func resolveHelp(args []string) (request, *wordError) {
	words := args
	if i := slices.IndexFunc(args, func(w string) bool { return strings.HasPrefix(w, "-") }); i >= 0 {
		words = args[:i]
	}
	switch {
	case len(words) == 0 || words[0] == "help" || words[0] == "version": // listed with all
		return request{help: true}, nil
	case len(words) == 1:
		noun, ok := nounOf(words[0])
		if !ok {
			return request{}, unknown(words[0], "", append(nouns(), "help", "version"), "")
		}
		c, _ := commandOf(noun, "") // a noun without verbs is itself the command
		return request{cmd: c, noun: noun, help: true}, nil
	}
	r, err := resolve(words[:2])
	return request{cmd: r.cmd, noun: r.noun, help: true}, err
}

// unknown is the error for typed, which names no command: it suggests the candidate nearest
// to typed's last word, prefixed.
func unknown(typed, prefix string, candidates []string, noun string) *wordError {
	msg := fmt.Sprintf("unknown command %q", typed)
	words := strings.Fields(typed)
	if near, ok := cliflag.Suggest(words[len(words)-1], candidates); ok {
		msg += fmt.Sprintf("; did you mean %q?", prefix+near)
	}
	return &wordError{msg, noun}
}

// nouns is every noun, in the order help lists them.
func nouns() []string {
	var out []string
	for _, c := range commands {
		if !slices.Contains(out, c.noun) {
			out = append(out, c.noun)
		}
	}
	return out
}

// nounOf reads a noun, plural as help lists it or singular ("job" for "jobs").
func nounOf(word string) (string, bool) {
	for _, n := range nouns() {
		if word == n || word == singular(n) {
			return n, true
		}
	}
	return "", false
}

// singular is a noun without its plural s; nouns that are not plurals (progress, audit)
// stay as they are.
func singular(noun string) string {
	if strings.HasSuffix(noun, "ss") {
		return noun
	}
	return strings.TrimSuffix(noun, "s")
}

// verbs is the verbs of noun, in the order help lists them.
func verbs(noun string) []string {
	var out []string
	for _, c := range commands {
		if c.noun == noun {
			out = append(out, c.verb)
		}
	}
	return out
}

func commandOf(noun, verb string) (command, bool) {
	for _, c := range commands {
		if c.noun == noun && c.verb == verb {
			return c, true
		}
	}
	return command{}, false
}
