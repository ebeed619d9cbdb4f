package client

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// flagSpec describes one long option of a command.
type flagSpec struct {
	name  string // without the leading "--"
	arg   string // placeholder of its value in help ("N"); empty for a boolean option
	usage string
}

// parsedArgs is a command line split into positionals and options.
type parsedArgs struct {
	positionals []string
	values      map[string]string // option name → value ("" for a boolean option)
}

func (p *parsedArgs) value(name string) (string, bool) {
	v, ok := p.values[name]
	return v, ok
}

func (p *parsedArgs) has(name string) bool {
	_, ok := p.values[name]
	return ok
}

// parseArgs splits args into positionals and the options in specs. Options may come before
// or after positionals, as "--name value" or "--name=value"; "--" ends the options. Parsing
// goes on after the first mistake so that callers can still use what was understood (a tools
// call names its --call-id in every error); the first mistake is returned.
func parseArgs(args []string, specs []flagSpec) (*parsedArgs, error) {
	p := &parsedArgs{values: map[string]string{}}
	var first error
	fail := func(err error) {
		if first == nil {
			first = err
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			p.positionals = append(p.positionals, args[i+1:]...)
			return p, first
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			spec, ok := findFlag(specs, name)
			switch {
			case !ok:
				fail(invalidf("unknown option --%s (see --help)", name))
				continue
			case spec.arg == "" && hasVal:
				fail(invalidf("option --%s takes no value", name))
				continue
			case spec.arg != "" && !hasVal:
				if i+1 == len(args) {
					fail(invalidf("option --%s needs a value %s", name, spec.arg))
					continue
				}
				i++
				val = args[i]
			}
			if _, dup := p.values[name]; dup {
				fail(invalidf("option --%s is given more than once", name))
				continue
			}
			p.values[name] = val
		case len(a) > 1 && a[0] == '-':
			fail(invalidf("unknown option %s (see --help; put \"--\" before a positional that starts with \"-\")", a))
		default:
			p.positionals = append(p.positionals, a)
		}
	}
	return p, first
}

func findFlag(specs []flagSpec, name string) (flagSpec, bool) {
	for _, s := range specs {
		if s.name == name {
			return s, true
		}
	}
	return flagSpec{}, false
}

// wantsHelp reports whether -h or --help appears among the options of args.
func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "-h" || a == "--help" {
			return true
		}
	}
	return false
}

// parseInt reads the integer value of option --name. Bounds are the server's to check.
func parseInt(name, s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || strings.HasPrefix(s, "+") {
		return 0, invalidf("option --%s must be an integer, not %q", name, s)
	}
	return n, nil
}

// parseTimeout reads a non-negative decimal number of seconds ("30", "0.5", ".25").
func parseTimeout(s string) (time.Duration, error) {
	bad := invalidf("option --timeout must be a non-negative number of seconds, not %q", s)
	if strings.HasPrefix(s, "-") {
		return 0, bad
	}
	intPart, frac, _ := strings.Cut(s, ".")
	if intPart+frac == "" || !allDigits(intPart) || !allDigits(frac) {
		return 0, bad
	}
	secs, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, bad
	}
	if secs >= float64(math.MaxInt64)/float64(time.Second) {
		return time.Duration(math.MaxInt64), nil
	}
	return time.Duration(secs * float64(time.Second)), nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
