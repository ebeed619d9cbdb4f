package canonjson

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// maxIndirections bounds a chain of pointers and interfaces, so a value that points to itself
// fails instead of looping.
const maxIndirections = 1000

var (
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// reflectValue writes a value of a type the fast path in value does not know: pointers, named
// scalar types, maps with string keys, slices and arrays are walked here, with their elements
// written by value; json.Marshaler and encoding.TextMarshaler implementations, structs and
// everything else go through encoding/json.
func (e *encoder) reflectValue(dst []byte, x any, depth int) ([]byte, error) {
	v := reflect.ValueOf(x)
	for hops := 0; ; hops++ {
		if !v.IsValid() {
			return append(dst, "null"...), nil
		}
		if implementsMarshaler(v.Type()) {
			return e.viaEncodingJSON(dst, v, depth)
		}
		if k := v.Kind(); k != reflect.Pointer && k != reflect.Interface {
			if hops > 0 {
				// The fast path may know the type pointed to, such as *string or *Number.
				return e.value(dst, v.Interface(), depth)
			}
			break
		}
		if v.IsNil() {
			return append(dst, "null"...), nil
		}
		if hops == maxIndirections {
			return dst, fmt.Errorf("canonjson: more than %d indirections in %s", maxIndirections, reflect.TypeOf(x))
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Bool:
		return strconv.AppendBool(dst, v.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(dst, v.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.AppendUint(dst, v.Uint(), 10), nil
	case reflect.Float32:
		return appendFloat(dst, v.Float(), 32)
	case reflect.Float64:
		return appendFloat(dst, v.Float(), 64)
	case reflect.String:
		return appendString(dst, v.String())
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return e.viaEncodingJSON(dst, v, depth)
		}
		if v.IsNil() {
			return append(dst, "null"...), nil
		}
		return e.reflectMap(dst, v, depth)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 && !implementsMarshaler(v.Type().Elem()) {
			return dst, errBytes
		}
		if v.IsNil() {
			return append(dst, "null"...), nil
		}
		return e.reflectArray(dst, v, depth)
	case reflect.Array:
		return e.reflectArray(dst, v, depth)
	}
	return e.viaEncodingJSON(dst, v, depth)
}

func implementsMarshaler(t reflect.Type) bool {
	return t.Implements(jsonMarshalerType) || t.Implements(textMarshalerType)
}

func (e *encoder) reflectMap(dst []byte, v reflect.Value, depth int) ([]byte, error) {
	if err := checkDepth(depth + 1); err != nil {
		return dst, err
	}
	type entry struct {
		key string
		val reflect.Value
	}
	entries := make([]entry, 0, v.Len())
	for it := v.MapRange(); it.Next(); {
		entries = append(entries, entry{it.Key().String(), it.Value()})
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	dst = append(dst, '{')
	var err error
	for i, ent := range entries {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = appendString(dst, ent.key); err != nil {
			return dst, err
		}
		dst = append(dst, ':')
		if dst, err = e.value(dst, ent.val.Interface(), depth+1); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

func (e *encoder) reflectArray(dst []byte, v reflect.Value, depth int) ([]byte, error) {
	if err := checkDepth(depth + 1); err != nil {
		return dst, err
	}
	dst = append(dst, '[')
	var err error
	for i := range v.Len() {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = e.value(dst, v.Index(i).Interface(), depth+1); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

// viaEncodingJSON encodes v with encoding/json, reads the result back strictly and writes it
// canonically.
func (e *encoder) viaEncodingJSON(dst []byte, v reflect.Value, depth int) ([]byte, error) {
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return dst, fmt.Errorf("canonjson: %w", err)
	}
	parsed, err := Parse(b)
	if err != nil {
		return dst, fmt.Errorf("canonjson: encoding/json output for %s: %w", v.Type(), err)
	}
	return e.value(dst, parsed, depth)
}
