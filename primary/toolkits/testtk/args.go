package testtk

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/turncli/turncli/internal/canonjson"
)

// The registry validates arguments against the schema before Call, so these helpers only
// convert. They accept canonjson.Number (what admission produces), json.Number and Go numbers
// (what in-process callers and tests pass).

// float reports the named argument as a float64.
func float(args map[string]any, name string) (float64, error) {
	switch v := args[name].(type) {
	case canonjson.Number:
		return v.Float64()
	case json.Number:
		return v.Float64()
	case float64:
		return v, nil
	case int:
		return float64(v), nil
	case int64:
		return float64(v), nil
	}
	return 0, fmt.Errorf("argument %q must be a number", name)
}

// integer reports the named argument as an int64.
func integer(args map[string]any, name string) (int64, error) {
	switch v := args[name].(type) {
	case canonjson.Number:
		if i, ok := v.Int64(); ok {
			return i, nil
		}
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i, nil
		}
	case int:
		return int64(v), nil
	case int64:
		return v, nil
	case float64:
		if v == math.Trunc(v) && math.Abs(v) <= 1<<53 {
			return int64(v), nil
		}
	}
	return 0, fmt.Errorf("argument %q must be an integer", name)
}

// seconds reports the named argument as a duration of that many seconds.
func seconds(args map[string]any, name string) (time.Duration, error) {
	f, err := float(args, name)
	if err != nil {
		return 0, err
	}
	if f < 0 || f > 600 {
		return 0, fmt.Errorf("argument %q must be between 0 and 600", name)
	}
	return time.Duration(f * float64(time.Second)), nil
}

// text reports the named argument as a string; ok is false when it is absent.
func text(args map[string]any, name string) (s string, ok bool, err error) {
	v, present := args[name]
	if !present {
		return "", false, nil
	}
	s, isString := v.(string)
	if !isString {
		return "", false, fmt.Errorf("argument %q must be a string", name)
	}
	return s, true, nil
}
