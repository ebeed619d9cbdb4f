package shelltk

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/turncli/turncli/internal/canonjson"
)

// The registry validates arguments against the schemas before Call; these helpers convert them
// and check only what the code relies on. They accept canonjson.Number (what admission
// produces), json.Number and Go numbers (what in-process callers pass).

const (
	defaultTimeout = 120 * time.Second
	defaultWait    = 30 * time.Second
)

type runArgs struct {
	command string
	timeout time.Duration
	wait    time.Duration
}

func parseRun(args map[string]any) (runArgs, error) {
	command, ok := args["command"].(string)
	if !ok || command == "" {
		return runArgs{}, errors.New(`argument "command" must be a non-empty string`)
	}
	timeout, err := seconds(args, "timeout_seconds", defaultTimeout, 1, 3600)
	if err != nil {
		return runArgs{}, err
	}
	wait, err := seconds(args, "wait_seconds", defaultWait, 0, 600)
	if err != nil {
		return runArgs{}, err
	}
	return runArgs{command: command, timeout: timeout, wait: wait}, nil
}

func parseHandle(args map[string]any) (string, error) {
	handle, ok := args["handle"].(string)
	if !ok || handle == "" {
		return "", errors.New(`argument "handle" must be a non-empty string`)
	}
	return handle, nil
}

// seconds reads an optional number of seconds within [lo, hi].
func seconds(args map[string]any, name string, def time.Duration, lo, hi float64) (time.Duration, error) {
	v, ok := args[name]
	if !ok {
		return def, nil
	}
	var f float64
	var err error
	switch n := v.(type) {
	case canonjson.Number:
		f, err = n.Float64()
	case json.Number:
		f, err = n.Float64()
	case float64:
		f = n
	case int:
		f = float64(n)
	case int64:
		f = float64(n)
	default:
		err = errors.New("not a number")
	}
	if err != nil || f < lo || f > hi {
		return 0, fmt.Errorf("argument %q must be a number from %g to %g", name, lo, hi)
	}
	return time.Duration(f * float64(time.Second)), nil
}
