package canonjson

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// TestCanonicalize checks outputs against Python 3's
// json.dumps(json.loads(x), sort_keys=True, separators=(",", ":"), ensure_ascii=False).
func TestCanonicalize(t *testing.T) {
	big := "123456789012345678901234567890" + strings.Repeat("7", 270)
	tests := []struct {
		name, input, want string
	}{
		{"KeysAreSorted", `{"b":2,"a":1}`, `{"a":1,"b":2}`},
		{"WhitespaceIsRemoved", " { \"a\" : [ 1 , { \"c\" : null , \"b\" : true } ] }\n", `{"a":[1,{"b":true,"c":null}]}`},
		{"NestedKeysAreSorted", `{"z":{"y":1,"x":2},"a":[{"d":1,"c":2}]}`, `{"a":[{"c":2,"d":1}],"z":{"x":2,"y":1}}`},
		{"KeysAreSortedByCodePointNotUTF16", `{"😀":1,"\uffff":2,"z":3,"é":4,"Z":5}`, `{"Z":5,"z":3,"é":4,"` + "\uffff" + `":2,"😀":1}`},
		{"EmptyContainersStay", `{"a":{},"b":[]}`, `{"a":{},"b":[]}`},
		{"IntegerStaysInteger", `1`, `1`},
		{"FloatStaysFloat", `1.0`, `1.0`},
		{"IntegerAndFloatStayDistinct", `[1,1.0]`, `[1,1.0]`},
		{"ExponentBecomesPositionalFloat", `1E2`, `100.0`},
		{"TrailingZeroIsDropped", `2.50`, `2.5`},
		{"LargeExponentIsScientific", `1e16`, `1e+16`},
		{"BelowSixteenDigitsIsPositional", `1e15`, `1000000000000000.0`},
		{"TenThousandthIsPositional", `0.0001`, `0.0001`},
		{"HundredThousandthIsScientific", `0.00001`, `1e-05`},
		{"HugeFloatIsScientific", `1.5e300`, `1.5e+300`},
		{"NegativeExponentBecomesPositional", `123e-2`, `1.23`},
		{"UnderflowBecomesZero", `1e-400`, `0.0`},
		{"NegativeZeroIntegerLosesSign", `-0`, `0`},
		{"NegativeZeroFloatKeepsSign", `-0.0`, `-0.0`},
		{"NegativeZeroWithExponentIsFloat", `-0e0`, `-0.0`},
		{"LargeIntegerIsDigitExact", big, big},
		{"NegativeLargeIntegerIsDigitExact", "-" + big, "-" + big},
		{"HTMLCharactersAndNonASCIIAreRaw", `"<>&é"`, `"<>&é"`},
		{"EscapedNonASCIIIsWrittenRaw", `"\u00e9\ud83d\ude00"`, `"é😀"`},
		{"ControlCharactersAreEscaped", `"\u0000\u001f\b\f\n\r\t"`, `"\u0000\u001f\b\f\n\r\t"`},
		{"ControlEscapesUseLowercaseHex", `"\u001F\u000B"`, `"\u001f\u000b"`},
		{"DELIsRaw", `"\u007f"`, "\"\x7f\""},
		{"LineSeparatorsAreRaw", `"\u2028\u2029"`, "\"\u2028\u2029\""},
		{"SolidusIsUnescaped", `"a\/b"`, `"a/b"`},
		{"QuoteAndBackslashAreEscaped", `"\"\\"`, `"\"\\"`},
		{"LiteralsStay", `[true,false,null]`, `[true,false,null]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Canonicalize([]byte(tt.input))
			if err != nil {
				t.Fatalf("Canonicalize(%q): %v", tt.input, err)
			}
			if string(got) != tt.want {
				t.Errorf("Canonicalize(%q) = %q, want %q", tt.input, got, tt.want)
			}
		})
	}
}

type request struct {
	Operation string            `json:"operation"`
	CallID    string            `json:"call_id,omitempty"`
	Arguments map[string]any    `json:"arguments"`
	Labels    map[string]string `json:"labels,omitempty"`
}

type level string

type blob []byte

type textKey struct{ s string }

func (k textKey) MarshalText() ([]byte, error) { return []byte("k-" + k.s), nil }

func TestMarshalGoValues(t *testing.T) {
	s := "pointed"
	n := Number("7")
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"NilIsNull", nil, `null`},
		{"BoolsAreLiterals", []any{true, false}, `[true,false]`},
		{"GoIntsAreIntegers", []any{int(-1), int8(-8), int16(16), int32(-32), int64(math.MinInt64), uint(1), uint8(8), uint16(16), uint32(32), uint64(math.MaxUint64)}, `[-1,-8,16,-32,-9223372036854775808,1,8,16,32,18446744073709551615]`},
		{"IntegralFloat64KeepsPointZero", float64(3), `3.0`},
		{"Float64IsShortestRoundTrip", 0.1, `0.1`},
		{"Float32UsesItsOwnShortestForm", float32(0.1), `0.1`},
		{"LargeFloat64IsScientific", 1e16, `1e+16`},
		{"NumberIsCanonicalised", Number("1E2"), `100.0`},
		{"JSONNumberIsCanonicalised", json.Number("-0"), `0`},
		{"MapKeysAreSorted", map[string]any{"b": 1, "a": "x", "c": nil}, `{"a":"x","b":1,"c":null}`},
		{"StringMapKeysAreSorted", map[string]string{"b": "2", "a": "1"}, `{"a":"1","b":"2"}`},
		{"StringSliceIsArray", []string{"x", "<y>"}, `["x","<y>"]`},
		{"NilMapIsNull", map[string]any(nil), `null`},
		{"NilSliceIsNull", []any(nil), `null`},
		{"EmptyMapIsObject", map[string]any{}, `{}`},
		{"RawMessageIsCanonicalised", json.RawMessage(` {"b":1.50, "a":[1E2]} `), `{"a":[100.0],"b":1.5}`},
		{"NestedRawMessageIsCanonicalised", map[string]any{"r": json.RawMessage(`{"y":1,"x":2}`)}, `{"r":{"x":2,"y":1}}`},
		{"NilRawMessageIsNull", json.RawMessage(nil), `null`},
		{"StructGoesThroughEncodingJSON", request{Operation: "tools.call", Arguments: map[string]any{"z": 1.5, "a": "<&>"}}, `{"arguments":{"a":"<&>","z":1.5},"operation":"tools.call"}`},
		{"StructWithNumberFieldKeepsNumber", struct {
			N Number `json:"n"`
		}{"2.50"}, `{"n":2.5}`},
		{"TypedMapIsSorted", map[string]int{"b": 2, "a": 1}, `{"a":1,"b":2}`},
		{"NamedStringKeysAreSorted", map[level]float64{"warn": 2, "info": 1}, `{"info":1.0,"warn":2.0}`},
		{"SliceOfMapsKeepsFloatForm", []map[string]any{{"x": 3.0}}, `[{"x":3.0}]`},
		{"ArrayIsArray", [2]bool{true, false}, `[true,false]`},
		{"PointerIsFollowed", &s, `"pointed"`},
		{"PointerToNumberIsANumber", &n, `7`},
		{"NilPointerIsNull", (*string)(nil), `null`},
		{"NamedStringIsString", level("debug"), `"debug"`},
		{"IntKeyedMapGoesThroughEncodingJSON", map[int]string{2: "b", 10: "a"}, `{"10":"a","2":"b"}`},
		{"TextMarshalerKeysGoThroughEncodingJSON", map[textKey]int{{"b"}: 1, {"a"}: 2}, `{"k-a":2,"k-b":1}`},
		{"MarshalerIsUsed", time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), `"2024-01-02T03:04:05Z"`},
		{"ControlCharactersInGoStringsAreEscaped", "a\x01\x7f\u2028", "\"a\\u0001\x7f\u2028\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Marshal(tt.in)
			if err != nil {
				t.Fatalf("Marshal(%#v): %v", tt.in, err)
			}
			if string(got) != tt.want {
				t.Errorf("Marshal(%#v) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func deepSlice(depth int) any {
	var v any = []any{}
	for range depth - 1 {
		v = []any{v}
	}
	return v
}

func TestMarshalRefuses(t *testing.T) {
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	var selfPointer any
	selfPointer = &selfPointer
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"NaNIsRefused", math.NaN(), "NaN and Infinity"},
		{"InfinityIsRefused", []any{math.Inf(-1)}, "NaN and Infinity"},
		{"Float32InfinityIsRefused", float32(math.Inf(1)), "NaN and Infinity"},
		{"InvalidUTF8StringIsRefused", "a\xffb", "not valid UTF-8"},
		{"InvalidUTF8KeyIsRefused", map[string]any{"\xff": 1}, "not valid UTF-8"},
		{"InvalidNumberIsRefused", Number("01"), "invalid number literal"},
		{"EmptyNumberIsRefused", Number(""), "invalid number literal"},
		{"NaNNumberIsRefused", json.Number("NaN"), "invalid number literal"},
		{"OverflowingNumberIsRefused", Number("1e400"), "overflows float64"},
		{"OverflowingIntegerIsRefused", Number("1" + strings.Repeat("0", 400)), "overflows float64"},
		{"ByteSliceIsRefused", []byte("x"), "cannot write []byte"},
		{"NamedByteSliceIsRefused", blob("x"), "cannot write []byte"},
		{"EmptyRawMessageIsRefused", json.RawMessage{}, "empty input"},
		{"InvalidRawMessageIsRefused", json.RawMessage(`{"a":1,"a":2}`), "duplicate key"},
		{"TooDeepIsRefused", deepSlice(MaxDepth + 1), "nesting deeper than 64"},
		{"CycleIsRefused", cyclic, "nesting deeper than 64"},
		{"PointerCycleIsRefused", selfPointer, "indirections"},
		{"ChannelIsRefused", make(chan int), "unsupported type"},
		{"ComplexIsRefused", complex(1, 2), "unsupported type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Marshal(tt.in)
			if err == nil {
				t.Fatalf("Marshal = %q, want error", got)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
	t.Run("SixtyFourDeepPasses", func(t *testing.T) {
		got, err := Marshal(deepSlice(MaxDepth))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != nested(MaxDepth) {
			t.Errorf("got %s", got)
		}
	})
	t.Run("InvalidRawMessageWrapsErrInvalid", func(t *testing.T) {
		if _, err := Marshal(json.RawMessage(`{`)); !errors.Is(err, ErrInvalid) {
			t.Errorf("error %v does not wrap ErrInvalid", err)
		}
	})
}

func TestAppend(t *testing.T) {
	t.Run("AppendsToDst", func(t *testing.T) {
		got, err := Append([]byte("x="), map[string]any{"b": 1, "a": 2})
		if err != nil || string(got) != `x={"a":2,"b":1}` {
			t.Errorf("Append = %q, %v", got, err)
		}
	})
	t.Run("ErrorLeavesDstUnchanged", func(t *testing.T) {
		got, err := Append([]byte("x="), []any{1, math.NaN()})
		if err == nil || string(got) != "x=" {
			t.Errorf("Append = %q, %v, want \"x=\" and an error", got, err)
		}
	})
}

func TestNumberMarshalJSON(t *testing.T) {
	got, err := json.Marshal(map[string]any{"n": Number("1E2"), "i": Number("-0")})
	if err != nil || string(got) != `{"i":0,"n":100.0}` {
		t.Errorf("json.Marshal = %s, %v", got, err)
	}
}

func TestEqual(t *testing.T) {
	parse := func(s string) any {
		t.Helper()
		v, err := Parse([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name string
		a, b any
		want bool
	}{
		{"KeyOrderDoesNotMatter", parse(`{"a":1,"b":[1,2]}`), parse(`{"b":[1,2],"a":1}`), true},
		{"ExponentFormDoesNotMatter", parse(`1E2`), parse(`100.0`), true},
		{"NegativeZeroIntegerEqualsZero", parse(`-0`), parse(`0`), true},
		{"IntegerAndFloatDiffer", parse(`1`), parse(`1.0`), false},
		{"ArrayOrderMatters", parse(`[1,2]`), parse(`[2,1]`), false},
		{"ParsedEqualsGoValue", parse(`{"n":3,"f":3.0}`), map[string]any{"n": 3, "f": 3.0}, true},
		{"UnwritableValueEqualsNothing", math.NaN(), math.NaN(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Equal(tt.a, tt.b); got != tt.want {
				t.Errorf("Equal = %v, want %v", got, tt.want)
			}
		})
	}
}
