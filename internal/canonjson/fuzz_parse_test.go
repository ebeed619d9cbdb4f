package canonjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// maxErrorText bounds a Parse error's text: errors quote at most a short cut of the input, so
// a huge key or string never comes back in full.
const maxErrorText = 200

// FuzzParse checks Parse against an independent reference built on encoding/json: Parse
// accepts a text exactly when it is RFC 8259 JSON that breaks none of the package's rules
// (UTF-8 everywhere, no lone surrogate escapes, no duplicate keys, depth at most MaxDepth, no
// number overflowing float64). What it accepts has the same value as encoding/json reads, and
// its canonical form reads back to an equal value; what it refuses is refused with ErrInvalid
// and a short message.
func FuzzParse(f *testing.F) {
	for _, s := range samples {
		f.Add([]byte(s))
	}
	for _, s := range []string{
		nested(MaxDepth), nested(MaxDepth + 1), nestedObjects(MaxDepth), nestedObjects(MaxDepth + 1),
		`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `[{"k":{"k":1}},{"k":2}]`,
		`"\ud83d\ude00"`, `"\ud800"`, `"\udc00"`, `"\ud800\u0041"`, `"\\ud800"`,
		"\"\x00\"", `"\u0000"`, "\"a\xffb\"", "\"\xed\xa0\x80\"", "\xef\xbb\xbf{}", "{}\x00",
		"1" + strings.Repeat("0", 308), "1" + strings.Repeat("0", 309), "1e308", "1.7976931348623159e308",
		"-1e400", "1e-400", "NaN", "-Infinity", "01", "-", "1.", ".5", "+1", "1e", "tru", "nul",
		`{"":{"":{"":[]}}}`, "[\n\t1 ,\r 2 ]", "\u00a0{}", `{"a" 1}`, `[1,]`, `{"a":1,}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data)
		obj, objErr := ParseObject(data)
		want := referenceAccepts(data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse(%q): error %v does not wrap ErrInvalid", data, err)
			}
			if len(err.Error()) > maxErrorText {
				t.Fatalf("Parse(%q): error text of %d bytes: %.300s", data, len(err.Error()), err)
			}
			if want {
				t.Fatalf("Parse(%q) refuses valid strict JSON: %v", data, err)
			}
			if objErr == nil || !errors.Is(objErr, ErrInvalid) {
				t.Fatalf("ParseObject(%q) = %v, want an ErrInvalid error like Parse's", data, objErr)
			}
			return
		}
		if !want {
			t.Fatalf("Parse(%q) accepts what strict JSON refuses: %#v", data, v)
		}
		if _, isObject := v.(map[string]any); isObject != (objErr == nil) {
			t.Fatalf("ParseObject(%q) error %v disagrees with Parse's %T", data, objErr, v)
		}
		if objErr == nil && !reflect.DeepEqual(any(obj), v) {
			t.Fatalf("ParseObject(%q) and Parse disagree", data)
		}
		if !errors.Is(objErr, ErrInvalid) && objErr != nil {
			t.Fatalf("ParseObject(%q): error %v does not wrap ErrInvalid", data, objErr)
		}

		canon, err := Marshal(v)
		if err != nil {
			t.Fatalf("Marshal of what Parse(%q) read fails: %v", data, err)
		}
		again, err := Parse(canon)
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", canon, data, err)
		}
		if !Equal(v, again) {
			t.Fatalf("canonical form %q of %q reads back different", canon, data)
		}
		if !sameDecoded(t, data, canon) {
			t.Fatalf("encoding/json reads %q and its canonical form %q differently", data, canon)
		}
	})
}

// referenceAccepts is what Parse must accept, decided without the package's code.
func referenceAccepts(data []byte) bool {
	if !json.Valid(data) || !utf8.Valid(data) || hasLoneSurrogate(data) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		object  bool
		wantKey bool
		keys    map[string]bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return true
		}
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.wantKey {
			if key, ok := tok.(string); ok {
				if top.keys[key] {
					return false // duplicate key
				}
				top.keys[key] = true
				top.wantKey = false
				continue
			}
		}
		switch x := tok.(type) {
		case json.Delim:
			switch x {
			case '{', '[':
				stack = append(stack, &frame{object: x == '{', wantKey: true, keys: map[string]bool{}})
				if len(stack) > MaxDepth {
					return false
				}
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		case json.Number:
			if f, err := strconv.ParseFloat(string(x), 64); err != nil && math.IsInf(f, 0) {
				return false
			}
		}
		// A value ended: the enclosing object wants its next key.
		if len(stack) > 0 {
			stack[len(stack)-1].wantKey = true
		}
	}
}

// hasLoneSurrogate reports whether valid JSON text escapes a UTF-16 surrogate that is not
// the first half of a \uD8xx\uDCxx pair followed by its second half.
func hasLoneSurrogate(data []byte) bool {
	inString := false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case !inString:
			inString = c == '"'
		case c == '"':
			inString = false
		case c == '\\' && data[i+1] == 'u':
			r, _ := strconv.ParseUint(string(data[i+2:i+6]), 16, 32)
			switch {
			case r >= 0xdc00 && r < 0xe000:
				return true
			case r >= 0xd800 && r < 0xdc00:
				if i+12 > len(data) || data[i+6] != '\\' || data[i+7] != 'u' {
					return true
				}
				lo, _ := strconv.ParseUint(string(data[i+8:i+12]), 16, 32)
				if lo < 0xdc00 || lo >= 0xe000 {
					return true
				}
				i += 6
			}
			i += 5
		case c == '\\':
			i++ // the escaped character
		}
	}
	return false
}

// sameDecoded reports whether encoding/json reads a and b to the same value (numbers as
// float64, so 1E2 and 100.0 are the same).
func sameDecoded(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("encoding/json cannot read %q: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("encoding/json cannot read %q: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}
