package canonjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Marshal writes v in canonical form (see the package doc). It accepts nil, bool, string,
// Number, json.Number, every Go integer and float type, map[string]any, map[string]string,
// []any, []string and json.RawMessage (read strictly with Parse, then written canonically),
// nested in any combination, plus pointers to them, maps with string keys and slices or arrays
// of any accepted type. Any other value, such as a struct with json tags or a json.Marshaler,
// is encoded with encoding/json, read back strictly and written canonically, so inside it
// encoding/json's rules apply (an integral float64 field is then written as an integer).
//
// Nil maps, slices and pointers are written as null. Marshal refuses NaN and Infinity, strings
// that are not valid UTF-8, invalid Number literals, numbers that overflow float64, []byte
// (ambiguous between text and binary: convert it to a string or json.RawMessage) and nesting
// deeper than MaxDepth.
func Marshal(v any) ([]byte, error) {
	// Encode into scratch space and return exactly the encoded bytes: callers keep results (a
	// receipt keeps its arguments and outcome), and a "{}" must not keep a 512-byte array alive.
	var scratch [512]byte
	out, err := Append(scratch[:0], v)
	if err != nil {
		return nil, err
	}
	if len(out) > len(scratch) {
		return out, nil // already grown onto the heap
	}
	return bytes.Clone(out), nil
}

// Append appends the canonical form of v to dst, as Marshal writes it. On error it returns dst
// unchanged.
func Append(dst []byte, v any) ([]byte, error) {
	var e encoder
	out, err := e.value(dst, v, 0)
	if err != nil {
		return dst, err
	}
	return out, nil
}

// Canonicalize reads data with Parse and writes the value with Marshal.
func Canonicalize(data []byte) ([]byte, error) {
	v, err := Parse(data)
	if err != nil {
		return nil, err
	}
	return Append(make([]byte, 0, len(data)), v)
}

// Equal reports whether a and b, typically values returned by Parse, have the same canonical
// form. A value Marshal refuses is equal to nothing.
func Equal(a, b any) bool {
	ca, err := Marshal(a)
	if err != nil {
		return false
	}
	cb, err := Marshal(b)
	if err != nil {
		return false
	}
	return bytes.Equal(ca, cb)
}

var errBytes = errors.New("canonjson: cannot write []byte; convert it to a string or json.RawMessage")

// encoder writes one value. keys is scratch space for the sorted keys of the objects being
// written, innermost last.
type encoder struct {
	keys []string
}

// value appends v, which sits at the given depth (the number of enclosing arrays and objects).
func (e *encoder) value(dst []byte, v any, depth int) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case string:
		return appendString(dst, x)
	case Number:
		return appendNumber(dst, string(x))
	case json.Number:
		return appendNumber(dst, string(x))
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int8:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case uint:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint8:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint16:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint32:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint64:
		return strconv.AppendUint(dst, x, 10), nil
	case float64:
		return appendFloat(dst, x, 64)
	case float32:
		return appendFloat(dst, float64(x), 32)
	case map[string]any:
		if x == nil {
			return append(dst, "null"...), nil
		}
		return writeObject(e, dst, x, depth)
	case map[string]string:
		if x == nil {
			return append(dst, "null"...), nil
		}
		return writeObject(e, dst, x, depth)
	case []any:
		if x == nil {
			return append(dst, "null"...), nil
		}
		return writeArray(e, dst, x, depth)
	case []string:
		if x == nil {
			return append(dst, "null"...), nil
		}
		return writeArray(e, dst, x, depth)
	case json.RawMessage:
		if x == nil {
			return append(dst, "null"...), nil
		}
		parsed, err := Parse(x)
		if err != nil {
			return dst, fmt.Errorf("canonjson: json.RawMessage: %w", err)
		}
		return e.value(dst, parsed, depth)
	case []byte:
		return dst, errBytes
	}
	return e.reflectValue(dst, v, depth)
}

func checkDepth(depth int) error {
	if depth > MaxDepth {
		return fmt.Errorf("canonjson: nesting deeper than %d", MaxDepth)
	}
	return nil
}

// writeObject writes m with its keys in code point order (bytewise order of UTF-8 strings).
func writeObject[V any](e *encoder, dst []byte, m map[string]V, depth int) ([]byte, error) {
	if err := checkDepth(depth + 1); err != nil {
		return dst, err
	}
	base := len(e.keys)
	for k := range m {
		e.keys = append(e.keys, k)
	}
	slices.Sort(e.keys[base:])
	dst = append(dst, '{')
	var err error
	for i := base; i < base+len(m); i++ {
		k := e.keys[i] // re-read each time: nested objects may grow e.keys
		if i > base {
			dst = append(dst, ',')
		}
		if dst, err = appendString(dst, k); err != nil {
			return dst, err
		}
		dst = append(dst, ':')
		if dst, err = e.value(dst, m[k], depth+1); err != nil {
			return dst, err
		}
	}
	clear(e.keys[base:])
	e.keys = e.keys[:base]
	return append(dst, '}'), nil
}

func writeArray[V any](e *encoder, dst []byte, a []V, depth int) ([]byte, error) {
	if err := checkDepth(depth + 1); err != nil {
		return dst, err
	}
	dst = append(dst, '[')
	var err error
	for i, v := range a {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = e.value(dst, v, depth+1); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

// plain marks the bytes a string holds unchanged in JSON text: printable ASCII other than '"'
// and '\\'. Parse and appendString skip runs of them without further checks.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendString writes s quoted, escaping only '"', '\\' and control characters below 0x20
// (\b \f \n \r \t in short form, the rest as \u00xx with lowercase hex, as Python does).
// Everything else, including DEL, U+2028, U+2029 and "<>&", is written as raw UTF-8.
func appendString(dst []byte, s string) ([]byte, error) {
	const hex = "0123456789abcdef"
	if !utf8.ValidString(s) {
		return dst, errors.New("canonjson: string is not valid UTF-8")
	}
	dst = append(dst, '"')
	flushed := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if plain[c] || c >= utf8.RuneSelf {
			continue
		}
		dst = append(dst, s[flushed:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		flushed = i + 1
	}
	dst = append(dst, s[flushed:]...)
	return append(dst, '"'), nil
}
