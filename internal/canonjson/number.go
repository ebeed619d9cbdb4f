package canonjson

import (
	"errors"
	"math"
	"strconv"
)

// Number is a JSON number kept as its literal text as read, for example "1", "1.0" or
// "-2.5e3". Keeping the text lets an integer of any size stay exact and keeps 1 and 1.0
// distinct.
type Number string

// IsInteger reports whether n is a valid JSON number literal with no fraction and no exponent.
func (n Number) IsInteger() bool {
	end, isInt, msg := scanNumber(n, 0)
	return msg == "" && end == len(n) && isInt
}

// Float64 returns the value of n as the nearest float64. It fails if n is not a JSON number
// literal or overflows float64; a value too small for float64 becomes zero.
func (n Number) Float64() (float64, error) {
	if end, _, msg := scanNumber(n, 0); msg != "" || end != len(n) {
		return 0, errNumberSyntax(string(n))
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil && math.IsInf(f, 0) {
		return 0, errNumberRange(string(n))
	}
	return f, nil
}

// Int64 returns the value of n if n is an integer literal that fits in an int64.
func (n Number) Int64() (int64, bool) {
	if !n.IsInteger() {
		return 0, false
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return 0, false
	}
	return i, true
}

// MarshalJSON writes n in canonical form, so that encoding/json also writes a Number as a
// number rather than a string.
func (n Number) MarshalJSON() ([]byte, error) {
	return appendNumber(nil, string(n))
}

func errNumberSyntax(lit string) error {
	return errors.New("canonjson: invalid number literal " + quoteShort(lit))
}

func errNumberRange(lit string) error {
	return errors.New("canonjson: number overflows float64: " + quoteShort(lit))
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// scanNumber reads the RFC 8259 number starting at s[i]. It returns the offset just past the
// number and whether it has neither fraction nor exponent; on a syntax error msg is set and end
// is the offset of the fault.
func scanNumber[T ~string | ~[]byte](s T, i int) (end int, isInt bool, msg string) {
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i >= len(s):
		return i, false, "number has no digits"
	case s[i] == '0':
		if i+1 < len(s) && isDigit(s[i+1]) {
			return i, false, "number has a leading zero"
		}
		i++
	case isDigit(s[i]):
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	default:
		return i, false, "number has no digits"
	}
	isInt = true
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || !isDigit(s[i]) {
			return i, false, "number has no digits after the decimal point"
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		isInt = false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || !isDigit(s[i]) {
			return i, false, "number has no exponent digits"
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		isInt = false
	}
	return i, isInt, ""
}

// fitsFloat64 reports whether the valid literal lit does not overflow float64. An integer of at
// most 308 digits is below 1e308 and always fits, so it skips the conversion.
func fitsFloat64(lit string, isInt bool) bool {
	if isInt && len(lit) <= 308 {
		return true
	}
	f, err := strconv.ParseFloat(lit, 64)
	return err == nil || !math.IsInf(f, 0)
}

// appendNumber writes the literal lit canonically: an integer as its digits ("-0" as "0"),
// anything with a fraction or exponent as a float64 in the form appendFloat gives.
func appendNumber(dst []byte, lit string) ([]byte, error) {
	end, isInt, msg := scanNumber(lit, 0)
	if msg != "" || end != len(lit) {
		return dst, errNumberSyntax(lit)
	}
	if isInt {
		if !fitsFloat64(lit, true) {
			return dst, errNumberRange(lit)
		}
		if lit == "-0" {
			return append(dst, '0'), nil
		}
		return append(dst, lit...), nil
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && math.IsInf(f, 0) {
		return dst, errNumberRange(lit)
	}
	return appendFloat(dst, f, 64)
}

// appendFloat writes f as Python's repr(float) does: the shortest digits that read back as the
// same value (at bitSize precision), in scientific form with a signed exponent of at least two
// digits when the decimal exponent is below -4 or at least 16, otherwise positional with at
// least one fractional digit ("1.0", "-0.0", "1e+16", "1e-05").
func appendFloat(dst []byte, f float64, bitSize int) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, errors.New("canonjson: NaN and Infinity cannot be written as JSON")
	}
	var scratch [32]byte
	sci := strconv.AppendFloat(scratch[:0], f, 'e', -1, bitSize)
	if exp := decimalExponent(sci); exp < -4 || exp >= 16 {
		return append(dst, sci...), nil
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, 'f', -1, bitSize)
	for _, c := range dst[start:] {
		if c == '.' {
			return dst, nil
		}
	}
	return append(dst, '.', '0'), nil
}

// decimalExponent returns the exponent of a number strconv wrote in 'e' format.
func decimalExponent(sci []byte) int {
	i := len(sci) - 1
	for sci[i] != 'e' {
		i--
	}
	exp := 0
	for _, c := range sci[i+2:] {
		exp = exp*10 + int(c-'0')
	}
	if sci[i+1] == '-' {
		return -exp
	}
	return exp
}
