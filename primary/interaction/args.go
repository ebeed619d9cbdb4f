package interaction

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits of the background tools' arguments (contract: interaction controls, and ours for
// what it leaves open).
const (
	MaxCommandChars = 2000
	MaxLabelChars   = 120
	// MaxTaskBytes keeps a brief within what one environment variable may hold.
	MaxTaskBytes = 100_000
)

// stringArg returns an optional string argument, trimmed.
func stringArg(args map[string]any, name string) (string, error) {
	v, ok := args[name]
	if !ok {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s must be a string", name)
	}
	return strings.TrimSpace(s), nil
}

func label(args map[string]any) (string, error) {
	l, err := stringArg(args, "label")
	if err != nil {
		return "", err
	}
	if n := utf8.RuneCountInString(l); n > MaxLabelChars {
		return "", fmt.Errorf("label is %d characters; at most %d are allowed", n, MaxLabelChars)
	}
	return l, nil
}

func commandArg(args map[string]any) (string, error) {
	c, err := stringArg(args, "command")
	if err != nil {
		return "", err
	}
	switch n := utf8.RuneCountInString(c); {
	case n == 0:
		return "", fmt.Errorf("command is empty: give the Bash command to run")
	case n > MaxCommandChars:
		return "", fmt.Errorf("command is %d characters; at most %d are allowed. Put it in a script file in the workspace and run that file instead", n, MaxCommandChars)
	}
	return c, nil
}

func taskArg(args map[string]any) (string, error) {
	t, err := stringArg(args, "task")
	if err != nil {
		return "", err
	}
	switch {
	case t == "":
		return "", fmt.Errorf("task is empty: give a complete, self-contained brief")
	case len(t) > MaxTaskBytes:
		return "", fmt.Errorf("task is %d bytes; at most %d are allowed. Put the details in a file in the workspace and point the brief at it", len(t), MaxTaskBytes)
	}
	return t, nil
}
