package canonjson

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func nested(depth int) string {
	return strings.Repeat("[", depth) + strings.Repeat("]", depth)
}

func nestedObjects(depth int) string {
	return strings.Repeat(`{"a":`, depth-1) + "{}" + strings.Repeat("}", depth-1)
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  string // substring of the error message
	}{
		{"EmptyInputIsRejected", "", "empty input at offset 0"},
		{"WhitespaceOnlyIsRejected", " \n", "unexpected end of input"},
		{"UnclosedObjectIsRejected", "{", "unexpected end of input, want an object key at offset 1"},
		{"UnclosedArrayIsRejected", "[1,", "unexpected end of input"},
		{"UnterminatedStringIsRejected", `"abc`, "unterminated string at offset 0"},
		{"DuplicateKeyIsRejected", `{"a":1,"a":2}`, `duplicate key "a" at offset 7`},
		{"DuplicateKeyAfterUnescapingIsRejected", `{"a":1,"\u0061":2}`, `duplicate key "a"`},
		{"DuplicateKeyNestedThreeDeepIsRejected", `{"x":{"y":{"z":{"k":1,"k":2}}}}`, `duplicate key "k" at offset 22`},
		{"DuplicateKeyInArrayElementIsRejected", `[{},{"a":1,"b":2,"a":3}]`, `duplicate key "a"`},
		{"NaNIsRejected", "NaN", "NaN and Infinity are not JSON at offset 0"},
		{"InfinityIsRejected", "[Infinity]", "NaN and Infinity are not JSON at offset 1"},
		{"NegativeInfinityIsRejected", "-Infinity", "NaN and Infinity are not JSON"},
		{"OverflowingExponentIsRejected", "1e999", "number overflows float64 at offset 0"},
		{"NegativeOverflowIsRejected", "-1e400", "number overflows float64"},
		{"FourHundredDigitIntegerIsRejected", "1" + strings.Repeat("0", 399), "number overflows float64"},
		{"SixtyFiveDeepArraysAreRejected", nested(65), "nesting deeper than 64 at offset 64"},
		{"SixtyFiveDeepObjectsAreRejected", nestedObjects(65), "nesting deeper than 64"},
		{"ByteOrderMarkIsRejected", "\ufeff{}", "byte order mark at offset 0"},
		{"InvalidUTF8InStringIsRejected", "\"a\xffb\"", "invalid UTF-8 in string at offset 2"},
		{"InvalidUTF8InKeyIsRejected", "{\"\xc3\":1}", "invalid UTF-8 in string at offset 2"},
		{"InvalidUTF8AfterEscapeIsRejected", "\"\\n\xff\"", "invalid UTF-8 in string at offset 3"},
		{"EncodedSurrogateIsRejected", "\"\xed\xa0\x80\"", "invalid UTF-8"},
		{"OverlongEncodingIsRejected", "\"\xc0\xaf\"", "invalid UTF-8"},
		{"InvalidUTF8OutsideStringIsRejected", "\xff", "unexpected byte 0xff"},
		{"LoneHighSurrogateIsRejected", `"\ud800"`, "lone surrogate in string at offset 1"},
		{"LoneLowSurrogateIsRejected", `"\udc00"`, "lone surrogate in string"},
		{"HighSurrogateBeforeNonSurrogateIsRejected", `"\ud800\u0041"`, "lone surrogate in string"},
		{"HighSurrogateBeforeTextIsRejected", `"\ud800abcdef"`, "lone surrogate in string"},
		{"TrailingGarbageIsRejected", `{} x`, "trailing data after the value at offset 3"},
		{"SecondValueIsRejected", `1 2`, "trailing data after the value at offset 2"},
		{"TrailingNULIsRejected", "{}\x00", "trailing data"},
		{"LeadingZeroIsRejected", "01", "number has a leading zero at offset 0"},
		{"NegativeLeadingZeroIsRejected", "-01", "leading zero at offset 1"},
		{"BareMinusIsRejected", "-", "number has no digits"},
		{"LeadingPlusIsRejected", "+1", "unexpected '+'"},
		{"LeadingDotIsRejected", ".5", "unexpected '.'"},
		{"TrailingDotIsRejected", "1.", "no digits after the decimal point"},
		{"EmptyExponentIsRejected", "1e+", "no exponent digits"},
		{"HexNumberIsRejected", "0x10", "trailing data"},
		{"TrailingCommaInArrayIsRejected", "[1,]", "unexpected ']', want a value"},
		{"TrailingCommaInObjectIsRejected", `{"a":1,}`, "want an object key"},
		{"MissingColonIsRejected", `{"a" 1}`, "want ':'"},
		{"UnquotedKeyIsRejected", `{a:1}`, "want an object key"},
		{"SingleQuotesAreRejected", `'a'`, "unexpected '\\''"},
		{"RawControlCharacterInStringIsRejected", "\"a\tb\"", "control character in string at offset 2"},
		{"InvalidEscapeIsRejected", `"\x"`, "invalid escape"},
		{"ShortUnicodeEscapeIsRejected", `"\u12"`, "invalid \\u escape"},
		{"MisspelledLiteralIsRejected", "tru", "invalid literal, want true"},
		{"CapitalisedLiteralIsRejected", "True", "unexpected 'T'"},
		{"FormFeedAsWhitespaceIsRejected", "\f1", "unexpected byte 0x0c"},
		{"NonBreakingSpaceAsWhitespaceIsRejected", "\u00a01", "unexpected byte 0xc2"},
		{"CommentIsRejected", "1 // c", "trailing data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Parse([]byte(tt.input))
			if err == nil {
				t.Fatalf("Parse(%q) = %#v, want error", tt.input, v)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %q does not wrap ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  any
	}{
		{"ObjectIsRead", `{"a":1,"b":[true,false,null]}`, map[string]any{"a": Number("1"), "b": []any{true, false, nil}}},
		{"EmptyContainersAreNotNil", `{"o":{},"a":[]}`, map[string]any{"o": map[string]any{}, "a": []any{}}},
		{"ArrayIsAValue", `[]`, []any{}},
		{"StringIsAValue", `"x"`, "x"},
		{"NullIsAValue", `null`, nil},
		{"NumbersKeepTheirLiteral", `[1,1.0,-0,1E2,2.50]`, []any{Number("1"), Number("1.0"), Number("-0"), Number("1E2"), Number("2.50")}},
		{"UnderflowIsAllowed", `1e-400`, Number("1e-400")},
		{"ThreeHundredDigitIntegerIsAllowed", "9" + strings.Repeat("0", 299), Number("9" + strings.Repeat("0", 299))},
		{"LargestFloatIsAllowed", `1.7976931348623157e308`, Number("1.7976931348623157e308")},
		{"SurroundingWhitespaceIsAllowed", " \t\r\n{ \"a\" : [ 1 , 2 ] }\n", map[string]any{"a": []any{Number("1"), Number("2")}}},
		{"EscapesAreDecoded", `"\"\\\/\b\f\n\r\t\u0041\u00e9\u2028"`, "\"\\/\b\f\n\r\tAé\u2028"},
		{"SurrogatePairIsJoined", `"\ud83d\ude00"`, "😀"},
		{"UppercaseHexEscapeIsAllowed", `"\u00E9"`, "é"},
		{"EscapedNULIsAllowed", `"a\u0000b"`, "a\x00b"},
		{"RawNonASCIIIsAllowed", `"é😀\uffff"`, "é😀\uffff"},
		{"SameKeyInSiblingObjectsIsAllowed", `[{"a":1},{"a":2}]`, []any{map[string]any{"a": Number("1")}, map[string]any{"a": Number("2")}}},
		{"KeysDifferingOnlyInCaseAreDistinct", `{"a":1,"A":2}`, map[string]any{"a": Number("1"), "A": Number("2")}},
		{"DELIsAllowedRaw", "\"\x7f\"", "\x7f"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.input))
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.input, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse(%q) = %#v, want %#v", tt.input, got, tt.want)
			}
		})
	}
}

func TestParseDepth(t *testing.T) {
	t.Run("SixtyFourDeepArraysPass", func(t *testing.T) {
		if _, err := Parse([]byte(nested(MaxDepth))); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("SixtyFourDeepObjectsPass", func(t *testing.T) {
		if _, err := Parse([]byte(nestedObjects(MaxDepth))); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("DepthIsNotCumulativeAcrossSiblings", func(t *testing.T) {
		in := "[" + strings.Repeat(nested(MaxDepth-1)+",", 10) + "1]"
		if _, err := Parse([]byte(in)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("DeepNestingFailsWithoutExhaustingTheStack", func(t *testing.T) {
		if _, err := Parse([]byte(strings.Repeat("[", 1<<20))); err == nil {
			t.Fatal("want error")
		}
	})
}

func TestParseObject(t *testing.T) {
	t.Run("ObjectIsReturned", func(t *testing.T) {
		got, err := ParseObject([]byte(`{"operation":"tools.list"}`))
		if err != nil {
			t.Fatal(err)
		}
		if got["operation"] != "tools.list" {
			t.Errorf("got %#v", got)
		}
	})
	for _, tt := range []struct{ name, input, want string }{
		{"ArrayIsNotAnObject", ` []`, "value is an array, not an object at offset 1"},
		{"StringIsNotAnObject", `"x"`, "value is a string, not an object at offset 0"},
		{"NumberIsNotAnObject", `1`, "value is a number"},
		{"NullIsNotAnObject", `null`, "value is null"},
		{"BooleanIsNotAnObject", `true`, "value is a boolean"},
		{"ParseErrorsPassThrough", `{`, "unexpected end of input"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseObject([]byte(tt.input))
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseObject(%q) error = %v, want one wrapping ErrInvalid containing %q", tt.input, err, tt.want)
			}
		})
	}
}

func TestParseErrorsDoNotEchoLargeInput(t *testing.T) {
	long := strings.Repeat("k", 10000)
	tests := []struct{ name, input string }{
		{"LongDuplicateKey", `{"` + long + `":1,"` + long + `":2}`},
		{"LongInvalidNumber", strings.Repeat("1", 10000) + "."},
		{"LongTrailingData", `{} ` + long},
	}
	for _, tt := range tests {
		t.Run(tt.name+"IsNotEchoed", func(t *testing.T) {
			_, err := Parse([]byte(tt.input))
			if err == nil {
				t.Fatal("want error")
			}
			if len(err.Error()) > 120 {
				t.Errorf("error is %d bytes long: %.200s", len(err.Error()), err)
			}
		})
	}
}
