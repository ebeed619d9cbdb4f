package canonjson

import (
	"math"
	"strings"
	"testing"
)

func TestNumberIsInteger(t *testing.T) {
	tests := []struct {
		n    Number
		want bool
	}{
		{"0", true}, {"-0", true}, {"123", true}, {"-45", true},
		{Number("1" + strings.Repeat("0", 300)), true},
		{"1.0", false}, {"1e2", false}, {"1E2", false}, {"-2.5e3", false},
		{"", false}, {"01", false}, {"1x", false}, {"abc", false}, {"+1", false},
	}
	for _, tt := range tests {
		if got := tt.n.IsInteger(); got != tt.want {
			t.Errorf("Number(%q).IsInteger() = %v, want %v", tt.n, got, tt.want)
		}
	}
}

func TestNumberInt64(t *testing.T) {
	tests := []struct {
		n      Number
		want   int64
		wantOK bool
	}{
		{"0", 0, true},
		{"-0", 0, true},
		{"42", 42, true},
		{"-9223372036854775808", math.MinInt64, true},
		{"9223372036854775807", math.MaxInt64, true},
		{"9223372036854775808", 0, false},
		{"1.0", 0, false},
		{"1e2", 0, false},
		{"", 0, false},
		{"0x10", 0, false},
	}
	for _, tt := range tests {
		got, ok := tt.n.Int64()
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("Number(%q).Int64() = %d, %v, want %d, %v", tt.n, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestNumberFloat64(t *testing.T) {
	tests := []struct {
		n       Number
		want    float64
		wantErr bool
	}{
		{"1", 1, false},
		{"-2.5e3", -2500, false},
		{"1e-400", 0, false},
		{"1e999", 0, true},
		{"Infinity", 0, true},
		{"NaN", 0, true},
		{"inf", 0, true},
		{"0x1p3", 0, true},
		{"1_000", 0, true},
		{"", 0, true},
	}
	for _, tt := range tests {
		got, err := tt.n.Float64()
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("Number(%q).Float64() = %v, %v, want %v, error %v", tt.n, got, err, tt.want, tt.wantErr)
		}
	}
}

// TestFloatFormatMatchesPythonRepr checks appendFloat against outputs of Python 3's
// json.dumps(float(x)), which uses repr(float).
func TestFloatFormatMatchesPythonRepr(t *testing.T) {
	tests := []struct {
		f    float64
		want string
	}{
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1, "1.0"},
		{3, "3.0"},
		{100, "100.0"},
		{2.5, "2.5"},
		{0.1, "0.1"},
		{3.14159, "3.14159"},
		{0.0001, "0.0001"},
		{0.000123, "0.000123"},
		{0.00001, "1e-05"},
		{-1.5e-7, "-1.5e-07"},
		{1e15, "1000000000000000.0"},
		{9999999999999998, "9999999999999998.0"},
		{1234567890123456.7, "1234567890123456.8"},
		{1e16, "1e+16"},
		{12345678901234567, "1.2345678901234568e+16"},
		{1e22, "1e+22"},
		{1.5e300, "1.5e+300"},
		{math.MaxFloat64, "1.7976931348623157e+308"},
		{5e-324, "5e-324"},
	}
	for _, tt := range tests {
		got, err := appendFloat(nil, tt.f, 64)
		if err != nil || string(got) != tt.want {
			t.Errorf("appendFloat(%v) = %q, %v, want %q", tt.f, got, err, tt.want)
		}
	}
}

func TestFloatFormatRefusesNaNAndInfinity(t *testing.T) {
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got, err := appendFloat(nil, f, 64); err == nil {
			t.Errorf("appendFloat(%v) = %q, want error", f, got)
		}
	}
}
