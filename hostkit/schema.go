package hostkit

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"
)

// InputSchema derives the JSON Schema (draft 2020-12) of the arguments object T decodes from
// with encoding/json. T must be a struct, a map with string keys, or a pointer to one.
//
// The mapping follows encoding/json: exported fields, named by their `json` tag; `json:"-"`
// skips a field; embedded structs without a tag name contribute their fields. string → string;
// bool → boolean; integers → integer (with the bounds of sized and unsigned types); floats →
// number; []byte → base64 string; slices and arrays → array; maps → object of the element
// schema; structs → object with additionalProperties false; time.Time → date-time string;
// interface{} and json.RawMessage → any value; a type implementing encoding.TextUnmarshaler →
// string. A field is required unless it is a pointer or its tag says omitempty or omitzero.
// A `description:"…"` tag becomes the property's description. Channels, functions, complex
// numbers, non-empty interfaces and recursive types are refused.
func InputSchema[T any]() (json.RawMessage, error) {
	t := reflect.TypeFor[T]()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct && (t.Kind() != reflect.Map || t.Key().Kind() != reflect.String) {
		return nil, fmt.Errorf("input type %s must be a struct or a map with string keys", t)
	}
	g := schemaGen{visiting: make(map[reflect.Type]bool)}
	s, err := g.schema(t)
	if err != nil {
		return nil, err
	}
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	return json.Marshal(s)
}

type schemaGen struct {
	visiting map[reflect.Type]bool // types on the current path, to refuse recursion
}

var (
	timeType            = reflect.TypeFor[time.Time]()
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
	numberType          = reflect.TypeFor[json.Number]()
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func implements(t, iface reflect.Type) bool {
	return t.Implements(iface) || reflect.PointerTo(t).Implements(iface)
}

func (g *schemaGen) schema(t reflect.Type) (map[string]any, error) {
	switch t {
	case timeType:
		return map[string]any{"type": "string", "format": "date-time"}, nil
	case rawMessageType:
		return map[string]any{}, nil
	case numberType:
		return map[string]any{"type": "number"}, nil
	}
	switch {
	case implements(t, jsonUnmarshalerType):
		return map[string]any{}, nil // its JSON form is its own business
	case implements(t, textUnmarshalerType):
		return map[string]any{"type": "string"}, nil
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}, nil
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, nil
	case reflect.Int, reflect.Int64:
		return map[string]any{"type": "integer"}, nil
	case reflect.Int8, reflect.Int16, reflect.Int32:
		bits := t.Bits()
		return map[string]any{"type": "integer", "minimum": int64(-1) << (bits - 1), "maximum": int64(1)<<(bits-1) - 1}, nil
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		return map[string]any{"type": "integer", "minimum": 0}, nil
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return map[string]any{"type": "integer", "minimum": 0, "maximum": uint64(math.MaxUint64) >> (64 - t.Bits())}, nil
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}, nil
	case reflect.Pointer:
		return g.schema(t.Elem())
	case reflect.Interface:
		if t.NumMethod() == 0 {
			return map[string]any{}, nil
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !implements(t.Elem(), jsonUnmarshalerType) && !implements(t.Elem(), textUnmarshalerType) {
			return map[string]any{"type": "string", "contentEncoding": "base64"}, nil
		}
		items, err := g.nested(t.Elem())
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": items}, nil
	case reflect.Array:
		items, err := g.nested(t.Elem())
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": items, "minItems": t.Len(), "maxItems": t.Len()}, nil
	case reflect.Map:
		switch k := t.Key(); {
		case k.Kind() == reflect.String, implements(k, textUnmarshalerType):
		case k.Kind() >= reflect.Int && k.Kind() <= reflect.Uintptr:
		default:
			return nil, fmt.Errorf("map key type %s cannot be a JSON object key", k)
		}
		values, err := g.nested(t.Elem())
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "object", "additionalProperties": values}, nil
	case reflect.Struct:
		return g.object(t)
	}
	return nil, fmt.Errorf("type %s has no JSON Schema for arguments", t)
}

// nested is schema for a type inside another, refusing recursion.
func (g *schemaGen) nested(t reflect.Type) (map[string]any, error) {
	base := t
	for base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	if g.visiting[base] {
		return nil, fmt.Errorf("recursive type %s is not supported", base)
	}
	return g.schema(t)
}

// field is one JSON property of a struct.
type field struct {
	name     string
	typ      reflect.Type
	optional bool
	asString bool // `json:",string"`
	desc     string
}

func (g *schemaGen) object(t reflect.Type) (map[string]any, error) {
	if g.visiting[t] {
		return nil, fmt.Errorf("recursive type %s is not supported", t)
	}
	g.visiting[t] = true
	defer delete(g.visiting, t)

	fields, err := structFields(t, false, map[reflect.Type]bool{})
	if err != nil {
		return nil, err
	}
	props := make(map[string]any, len(fields))
	required := []string{}
	for _, f := range fields {
		var s map[string]any
		if f.asString {
			s = map[string]any{"type": "string"}
		} else if s, err = g.nested(f.typ); err != nil {
			return nil, fmt.Errorf("field %q: %w", f.name, err)
		}
		if f.desc != "" {
			s["description"] = f.desc
		}
		props[f.name] = s
		if !f.optional {
			required = append(required, f.name)
		}
	}
	out := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		out["required"] = required
	}
	return out, nil
}

// structFields lists t's JSON properties in field order, with embedded structs' fields
// promoted; a name seen first (the shallower, earlier field) wins. optional marks fields reached
// through an embedded pointer, which may be absent as a whole.
func structFields(t reflect.Type, optional bool, seen map[reflect.Type]bool) ([]field, error) {
	if seen[t] {
		return nil, nil
	}
	seen[t] = true
	var direct, promoted []field
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := sf.Type
		if sf.Anonymous && name == "" {
			base := ft
			if base.Kind() == reflect.Pointer {
				base = base.Elem()
			}
			if base.Kind() == reflect.Struct {
				inner, err := structFields(base, optional || ft.Kind() == reflect.Pointer, seen)
				if err != nil {
					return nil, err
				}
				promoted = append(promoted, inner...)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		f := field{name: name, typ: ft, optional: optional || ft.Kind() == reflect.Pointer, desc: sf.Tag.Get("description")}
		for o := range strings.SplitSeq(opts, ",") {
			switch o {
			case "omitempty", "omitzero":
				f.optional = true
			case "string":
				switch ft.Kind() {
				case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
					reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
					reflect.Float32, reflect.Float64:
					f.asString = true
				}
			}
		}
		direct = append(direct, f)
	}
	out := make([]field, 0, len(direct)+len(promoted))
	names := make(map[string]bool, len(direct)+len(promoted))
	for _, f := range append(direct, promoted...) {
		if !names[f.name] {
			names[f.name] = true
			out = append(out, f)
		}
	}
	return out, nil
}
