package canonjson

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// MaxDepth is the maximum nesting depth of arrays and objects: 64 nested arrays are accepted,
// 65 are not. A scalar at the top level has depth 0.
const MaxDepth = 64

// ErrInvalid is wrapped by every error Parse and ParseObject return, so a caller maps them all
// with one errors.Is check.
var ErrInvalid = errors.New("invalid JSON")

// syntaxError says what is wrong with the input and at which byte offset.
type syntaxError struct {
	msg    string
	offset int
}

func (e *syntaxError) Error() string {
	return ErrInvalid.Error() + ": " + e.msg + " at offset " + strconv.Itoa(e.offset)
}

func (e *syntaxError) Unwrap() error { return ErrInvalid }

var byteOrderMark = []byte("\xef\xbb\xbf")

// Parse reads exactly one strict JSON value (RFC 8259 plus the rules in the package doc). The
// result is built from map[string]any, []any, string, bool, nil and Number; arrays and objects
// are never nil.
func Parse(data []byte) (any, error) {
	if len(data) == 0 {
		return nil, &syntaxError{"empty input", 0}
	}
	if bytes.HasPrefix(data, byteOrderMark) {
		return nil, &syntaxError{"byte order mark", 0}
	}
	p := parser{data: data}
	p.skipSpace()
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(p.data) {
		return nil, p.errorf(p.pos, "trailing data after the value")
	}
	return v, nil
}

// ParseObject is Parse plus the rule that the value must be an object.
func ParseObject(data []byte) (map[string]any, error) {
	v, err := Parse(data)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		start := len(data) - len(bytes.TrimLeft(data, " \t\r\n"))
		return nil, &syntaxError{"value is " + kindOf(v) + ", not an object", start}
	}
	return obj, nil
}

func kindOf(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "an object"
}

// parser is a recursive-descent reader over one input. Its scratch slices are reused so that
// reading allocates only the values it returns.
type parser struct {
	data  []byte
	pos   int
	depth int
	buf   []byte // unescaped string being built
	stack []any  // elements of the arrays being read, innermost last
}

func (p *parser) errorf(offset int, format string, args ...any) error {
	return &syntaxError{fmt.Sprintf(format, args...), offset}
}

// unexpected reports the byte at p.pos (or the end of input) where what was wanted.
func (p *parser) unexpected(what string) error {
	if p.pos >= len(p.data) {
		return p.errorf(p.pos, "unexpected end of input, want %s", what)
	}
	return p.errorf(p.pos, "unexpected %s, want %s", describeByte(p.data[p.pos]), what)
}

func describeByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// peek returns the byte at p.pos, or 0 at the end of input (0 is never a valid token there).
func (p *parser) peek() byte {
	if p.pos < len(p.data) {
		return p.data[p.pos]
	}
	return 0
}

func (p *parser) value() (any, error) {
	switch c := p.peek(); {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.string()
		if err != nil {
			return nil, err
		}
		return s, nil
	case c == '-' || isDigit(c):
		return p.number()
	case c == 't':
		return p.literal("true", true)
	case c == 'f':
		return p.literal("false", false)
	case c == 'n':
		return p.literal("null", nil)
	case c == 'N' || c == 'I':
		return nil, p.errorf(p.pos, "NaN and Infinity are not JSON")
	}
	return nil, p.unexpected("a value")
}

func (p *parser) literal(word string, v any) (any, error) {
	if !bytes.HasPrefix(p.data[p.pos:], []byte(word)) {
		return nil, p.errorf(p.pos, "invalid literal, want %s", word)
	}
	p.pos += len(word)
	return v, nil
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > MaxDepth {
		return p.errorf(p.pos, "nesting deeper than %d", MaxDepth)
	}
	return nil
}

func (p *parser) object() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++ // '{'
	obj := make(map[string]any)
	p.skipSpace()
	if p.peek() == '}' {
		p.pos++
		p.depth--
		return obj, nil
	}
	for {
		if p.peek() != '"' {
			return nil, p.unexpected("an object key")
		}
		keyAt := p.pos
		key, err := p.string()
		if err != nil {
			return nil, err
		}
		if _, dup := obj[key]; dup {
			return nil, p.errorf(keyAt, "duplicate key %s", quoteShort(key))
		}
		p.skipSpace()
		if p.peek() != ':' {
			return nil, p.unexpected("':'")
		}
		p.pos++
		p.skipSpace()
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		obj[key] = v
		p.skipSpace()
		switch p.peek() {
		case ',':
			p.pos++
			p.skipSpace()
		case '}':
			p.pos++
			p.depth--
			return obj, nil
		default:
			return nil, p.unexpected("',' or '}'")
		}
	}
}

func (p *parser) array() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++ // '['
	p.skipSpace()
	if p.peek() == ']' {
		p.pos++
		p.depth--
		return []any{}, nil
	}
	base := len(p.stack)
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		p.stack = append(p.stack, v)
		p.skipSpace()
		switch p.peek() {
		case ',':
			p.pos++
			p.skipSpace()
		case ']':
			p.pos++
			p.depth--
			arr := make([]any, len(p.stack)-base)
			copy(arr, p.stack[base:])
			clear(p.stack[base:])
			p.stack = p.stack[:base]
			return arr, nil
		default:
			return nil, p.unexpected("',' or ']'")
		}
	}
}

// string reads a string starting at the opening quote. Strings without escapes are copied once
// from the input; escaped ones are built in p.buf.
func (p *parser) string() (string, error) {
	data := p.data
	start := p.pos + 1
	for i := start; i < len(data); {
		for i < len(data) && plain[data[i]] {
			i++
		}
		if i == len(data) {
			break
		}
		switch c := data[i]; {
		case c == '"':
			p.pos = i + 1
			return string(data[start:i]), nil
		case c == '\\':
			return p.escapedString(start, i)
		case c < 0x20:
			return "", p.errorf(i, "control character in string")
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				return "", p.errorf(i, "invalid UTF-8 in string")
			}
			i += size
		}
	}
	return "", p.errorf(p.pos, "unterminated string")
}

// escapedString continues string from the first backslash at i.
func (p *parser) escapedString(start, i int) (string, error) {
	data := p.data
	buf := append(p.buf[:0], data[start:i]...)
	for i < len(data) {
		c := data[i]
		switch {
		case c == '"':
			p.pos = i + 1
			s := string(buf)
			p.buf = buf[:0]
			return s, nil
		case c == '\\':
			if i+1 >= len(data) {
				return "", p.errorf(p.pos, "unterminated string")
			}
			switch e := data[i+1]; e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, n, err := p.unicodeEscape(i)
				if err != nil {
					return "", err
				}
				buf = utf8.AppendRune(buf, r)
				i += n
				continue
			default:
				return "", p.errorf(i, "invalid escape in string")
			}
			i += 2
		case c < 0x20:
			return "", p.errorf(i, "control character in string")
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				return "", p.errorf(i, "invalid UTF-8 in string")
			}
			buf = append(buf, data[i:i+size]...)
			i += size
		}
	}
	return "", p.errorf(p.pos, "unterminated string")
}

// unicodeEscape decodes the \uXXXX escape at i, joining a surrogate pair into one rune. It
// returns the rune and the number of input bytes used.
func (p *parser) unicodeEscape(i int) (rune, int, error) {
	r, ok := hex4(p.data, i+2)
	if !ok {
		return 0, 0, p.errorf(i, "invalid \\u escape")
	}
	switch {
	case r < 0xd800 || r >= 0xe000:
		return r, 6, nil
	case r >= 0xdc00:
		return 0, 0, p.errorf(i, "lone surrogate in string")
	}
	if i+7 >= len(p.data) || p.data[i+6] != '\\' || p.data[i+7] != 'u' {
		return 0, 0, p.errorf(i, "lone surrogate in string")
	}
	lo, ok := hex4(p.data, i+8)
	if !ok {
		return 0, 0, p.errorf(i+6, "invalid \\u escape")
	}
	if lo < 0xdc00 || lo >= 0xe000 {
		return 0, 0, p.errorf(i, "lone surrogate in string")
	}
	return 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00), 12, nil
}

func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

func (p *parser) number() (any, error) {
	start := p.pos
	if bytes.HasPrefix(p.data[start:], []byte("-Infinity")) {
		return nil, p.errorf(start, "NaN and Infinity are not JSON")
	}
	end, isInt, msg := scanNumber(p.data, start)
	if msg != "" {
		return nil, p.errorf(end, "%s", msg)
	}
	lit := string(p.data[start:end])
	if !fitsFloat64(lit, isInt) {
		return nil, p.errorf(start, "number overflows float64")
	}
	p.pos = end
	return Number(lit), nil
}

// quoteShort quotes s for an error message, cut to a few dozen bytes on a rune boundary so an
// error never echoes large input.
func quoteShort(s string) string {
	const limit = 40
	if len(s) <= limit {
		return strconv.Quote(s)
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "..."
}
