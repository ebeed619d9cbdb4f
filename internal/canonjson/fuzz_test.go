package canonjson

import (
	"bytes"
	"encoding/json"
	"testing"
)

// samples are inputs for the round-trip property and seeds for FuzzCanonicalize.
var samples = []string{
	realistic,
	`{"b":2,"a":1}`,
	`{}`, `[]`, `null`, `true`, `false`, `""`, `0`, `-0`, `-0.0`, `1`, `1.0`, `1E2`, `2.50`,
	`1e16`, `1e15`, `0.0001`, `0.00001`, `1e-400`, `1.5e300`, `5e-324`, `1.7976931348623157e308`,
	`-9223372036854775809`, `123456789012345678901234567890123456789012345678901234567890`,
	`"<>&é\u2028\u2029\u0000\u001f\u007f\"\\\/"`,
	`{"😀":1,"\uffff":2,"z":3,"é":{"\ud83d\ude00":[1,{"":null}]}}`,
	`[[[[[[[[[[[[[[[[[[[[1.25]]]]]]]]]]]]]]]]]]]]`,
	` {"a" : [ 1 , 2.0 , -3e-7 , "x" ] } `,
}

func TestCanonicalizeIsIdempotent(t *testing.T) {
	for _, s := range samples {
		once, err := Canonicalize([]byte(s))
		if err != nil {
			t.Fatalf("Canonicalize(%.40q): %v", s, err)
		}
		twice, err := Canonicalize(once)
		if err != nil {
			t.Fatalf("Canonicalize(%.40q) second pass: %v", once, err)
		}
		if !bytes.Equal(once, twice) {
			t.Errorf("Canonicalize is not idempotent on %.40q:\n once  %s\n twice %s", s, once, twice)
		}
	}
}

func FuzzCanonicalize(f *testing.F) {
	for _, s := range samples {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"a":1,"\u0061":2}`))
	f.Add([]byte(`"\ud800"`))
	f.Add([]byte("\xef\xbb\xbf{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		once, err := Canonicalize(data)
		if err != nil {
			return
		}
		twice, err := Canonicalize(once)
		if err != nil {
			t.Fatalf("canonical output %q does not parse: %v", once, err)
		}
		if !bytes.Equal(once, twice) {
			t.Fatalf("not idempotent: %q -> %q -> %q", data, once, twice)
		}
		if !json.Valid(once) {
			t.Fatalf("encoding/json rejects canonical output %q", once)
		}
		var v any
		if err := json.Unmarshal(once, &v); err != nil {
			t.Fatalf("encoding/json cannot read canonical output %q: %v", once, err)
		}
		if !json.Valid(data) {
			t.Fatalf("accepted %q, which encoding/json finds invalid", data)
		}
	})
}
