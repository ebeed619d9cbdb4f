package client

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/turncli/turncli/internal/canonjson"
)

// maxInputBytes bounds the call input as the server bounds request bodies (section 4).
const maxInputBytes = 64 << 10

// readCallInput returns the arguments object of a tools call, read from exactly one of the
// trailing JSON argument, --json, --json-file and --json-stdin; none means {}.
func readCallInput(p *parsedArgs, trailing []string, stdin io.Reader) (map[string]any, error) {
	var sources []string
	if len(trailing) > 0 {
		sources = append(sources, "trailing JSON")
	}
	for _, name := range []string{"json", "json-file", "json-stdin"} {
		if p.has(name) {
			sources = append(sources, "--"+name)
		}
	}
	if len(sources) > 1 {
		return nil, invalidf("give the call input only once, as trailing JSON, --json, --json-file or --json-stdin (got %s)",
			strings.Join(sources, " and "))
	}
	var data []byte
	switch {
	case len(sources) == 0:
		return map[string]any{}, nil
	case len(trailing) > 0:
		data = []byte(trailing[0])
	case p.has("json"):
		data = []byte(p.values["json"])
	case p.has("json-file"):
		f, err := os.Open(p.values["json-file"])
		if err != nil {
			return nil, invalidf("cannot read --json-file: %v", err)
		}
		defer f.Close()
		if data, err = readBounded(f); err != nil {
			return nil, invalidf("cannot read --json-file: %v", err)
		}
	default:
		var err error
		if data, err = readBounded(stdin); err != nil {
			return nil, invalidf("cannot read --json-stdin: %v", err)
		}
	}
	return parseCallInput(data)
}

// readBounded reads at most one byte more than maxInputBytes, enough to tell it is too big.
func readBounded(r io.Reader) ([]byte, error) {
	if r == nil {
		return nil, nil
	}
	return io.ReadAll(io.LimitReader(r, maxInputBytes+1))
}

// parseCallInput checks the input as the server will: strict JSON (section 4), an object,
// at most 64 KiB.
func parseCallInput(data []byte) (map[string]any, error) {
	if len(data) > maxInputBytes {
		return nil, invalidf("call input exceeds 64 KiB")
	}
	v, err := canonjson.Parse(data)
	if err != nil {
		return nil, invalidf("call input is not strict JSON: %v", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, invalidf("call input must be a JSON object, not %s", jsonKind(v))
	}
	return obj, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	case canonjson.Number:
		return "a number"
	default:
		return fmt.Sprintf("a %T", v)
	}
}
