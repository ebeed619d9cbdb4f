// Package cliflag holds what the command lines share on top of the standard flag package.
package cliflag

import (
	"flag"
	"strings"
)

// ParseInterspersed parses flags that may come before or after the positional arguments
// (`add NAME --role admin`) and returns the positional ones; after "--" everything is
// positional.
func ParseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		args = fs.Args()
		if strings.HasPrefix(args[0], "-") && args[0] != "-" { // only after "--"
			return append(positional, args...), nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}
