package agentcli

import (
	"fmt"
	"sort"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/internal/clierr"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/catalog"
)

// operation is a strictly read and validated Agent CLI operation.
type operation struct {
	name     string
	cursor   string // "" when absent or null
	limit    int
	query    string
	toolkit  string
	function string
	callID   uuid.UUID
	args     []byte // canonical arguments object
	docName  string
	offset   int
}

type fieldKind uint8

const (
	selectorField    fieldKind = iota + 1 // string of 1..128 characters
	optionalSelector                      // selector or null
	queryField                            // string of 1..1024 characters
	cursorField                           // string of at most 1024 characters, or null
	intField                              // integer
	uuidField                             // UUID string in any spelling
	objectField                           // JSON object
)

type fieldSpec struct {
	kind     fieldKind
	required bool
	min, max int // bounds of an intField
}

// operations lists, per operation, every field it takes. Anything else is refused.
var operations = map[string]map[string]fieldSpec{
	"tools.list": {
		"cursor": {kind: cursorField},
		"limit":  {kind: intField, min: 1, max: catalog.MaxListLimit},
	},
	"tools.search": {
		"query":   {kind: queryField, required: true},
		"toolkit": {kind: optionalSelector},
		"limit":   {kind: intField, min: 1, max: catalog.MaxSearchLimit},
	},
	"tools.describe": {
		"toolkit":  {kind: selectorField, required: true},
		"function": {kind: selectorField, required: true},
	},
	"tools.call": {
		"call_id":   {kind: uuidField, required: true},
		"toolkit":   {kind: selectorField, required: true},
		"function":  {kind: selectorField, required: true},
		"arguments": {kind: objectField},
	},
	"context.list": {
		"cursor": {kind: cursorField},
		"limit":  {kind: intField, min: 1, max: 1000},
	},
	"context.read": {
		"name":   {kind: selectorField, required: true},
		"offset": {kind: intField, min: 0, max: 1 << 30},
		"limit":  {kind: intField, min: 1, max: 65536},
	},
}

var defaultLimits = map[string]int{
	"tools.list": catalog.DefaultListLimit, "tools.search": catalog.DefaultSearchLimit,
	"context.list": catalog.DefaultListLimit, "context.read": 8000,
}

func invalid(format string, args ...any) error {
	return fault.Newf(fault.InvalidArgument, clierr.InvalidOperation+": "+format, args...)
}

// parseOperation reads one operation document strictly (contract section 4) and checks it
// against its operation's fields (section 5).
func parseOperation(body []byte) (*operation, error) {
	obj, err := canonjson.ParseObject(body)
	if err != nil {
		return nil, invalid("%v", err)
	}
	name, ok := obj["operation"].(string)
	if !ok {
		return nil, invalid(`"operation" must be one of tools.list, tools.search, tools.describe, tools.call, context.list, context.read`)
	}
	fields, ok := operations[name]
	if !ok {
		return nil, invalid("unknown operation %q", truncate(name))
	}
	op := &operation{name: name, limit: defaultLimits[name]}
	for key := range obj {
		if key == "operation" {
			continue
		}
		if _, ok := fields[key]; !ok {
			return nil, invalid("%s does not take %q", name, truncate(key))
		}
	}
	for _, key := range sortedKeys(fields) { // sorted, so the first problem reported is stable
		spec := fields[key]
		v, present := obj[key]
		if !present {
			if spec.required {
				return nil, invalid("%s needs %q", name, key)
			}
			continue
		}
		if err := op.set(key, spec, v); err != nil {
			return nil, err
		}
	}
	if op.name == "tools.call" && op.args == nil {
		op.args = []byte("{}")
	}
	return op, nil
}

func (op *operation) set(key string, spec fieldSpec, v any) error {
	switch spec.kind {
	case selectorField, optionalSelector:
		if v == nil && spec.kind == optionalSelector {
			return nil
		}
		s, ok := v.(string)
		if !ok || !catalog.ValidSelector(s) {
			return invalid("%q must be a string of 1 to %d characters", key, catalog.MaxSelector)
		}
		op.setString(key, s)
	case queryField:
		s, ok := v.(string)
		if !ok || !catalog.ValidQuery(s) {
			return invalid("%q must be a string of 1 to %d characters", key, catalog.MaxQuery)
		}
		op.query = s
	case cursorField:
		if v == nil {
			return nil
		}
		s, ok := v.(string)
		if !ok || utf8.RuneCountInString(s) > catalog.MaxCursor {
			return invalid("%q must be a string of at most %d characters or null", key, catalog.MaxCursor)
		}
		if s == "" {
			return fault.New(fault.InvalidArgument, clierr.InvalidCursor)
		}
		op.cursor = s
	case intField:
		n, ok := v.(canonjson.Number)
		i, isInt := n.Int64()
		if !ok || !isInt || i < int64(spec.min) || i > int64(spec.max) {
			return invalid("%q must be an integer from %d to %d", key, spec.min, spec.max)
		}
		if key == "offset" {
			op.offset = int(i)
		} else {
			op.limit = int(i)
		}
	case uuidField:
		s, ok := v.(string)
		id, err := uuid.Parse(s)
		if !ok || err != nil {
			return invalid("%q must be a UUID", key)
		}
		op.callID = id
	case objectField:
		m, ok := v.(map[string]any)
		if !ok {
			return invalid("%q must be a JSON object", key)
		}
		args, err := canonjson.Marshal(m)
		if err != nil {
			return invalid("%q: %v", key, err)
		}
		op.args = args
	default:
		return fmt.Errorf("agentcli: field %q has no kind", key)
	}
	return nil
}

func (op *operation) setString(key, s string) {
	switch key {
	case "toolkit":
		op.toolkit = s
	case "function":
		op.function = s
	case "name":
		op.docName = s
	}
}

// truncate keeps caller-supplied text in error messages short.
func truncate(s string) string {
	if len(s) <= 64 {
		return s
	}
	for i := 64; i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return s[:i] + "…"
		}
	}
	return ""
}

func sortedKeys(m map[string]fieldSpec) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
