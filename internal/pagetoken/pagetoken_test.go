package pagetoken

import (
	"encoding/base64"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/turncli/turncli/internal/fault"
)

func TestATokenDecodesToItsPositionWithTheSameListAndFilter(t *testing.T) {
	for _, pos := range []Position{{"42"}, {"1767225600000000000", "r-1"}, {"", "room", "", "Bash", "thread"}} {
		tok := Encode("allowances", []string{"room", "t1"}, pos)
		got, err := Decode(tok, "allowances", []string{"room", "t1"}, len(pos))
		if err != nil || !reflect.DeepEqual(got, pos) {
			t.Errorf("%q: %q, %v; want %q", tok, got, err, pos)
		}
		if strings.ContainsAny(tok, "+/=") {
			t.Errorf("%q is not URL-safe", tok)
		}
	}
}

func TestAnEmptyTokenIsTheFirstPage(t *testing.T) {
	if pos, err := Decode("", "jobs", nil, 1); pos != nil || err != nil {
		t.Fatalf("%q, %v; want the first page", pos, err)
	}
}

func TestATokenIsRefused(t *testing.T) {
	good := Encode("jobs", []string{"running", "room", ""}, Position{"7"})
	raw, _ := base64.RawURLEncoding.DecodeString(good)
	edit := func(f func(b []byte) []byte) string {
		return base64.RawURLEncoding.EncodeToString(f(append([]byte(nil), raw...)))
	}
	for _, tc := range []struct {
		name, token, list string
		filter            []string
		fields            int
		want              error
	}{
		{"OfAnotherList", good, "approvals", []string{"running", "room", ""}, 1, ErrOtherList},
		{"WithAnotherFilter", good, "jobs", []string{"finished", "room", ""}, 1, ErrOtherList},
		{"WithTheFilterValuesSplitElsewhere", good, "jobs", []string{"runningroom", "", ""}, 1, ErrOtherList},
		{"WithAFilterValueMore", good, "jobs", []string{"running", "room", "", ""}, 1, ErrOtherList},
		{"WithItsPositionEdited", edit(func(b []byte) []byte { b[len(b)-1] = '8'; return b }), "jobs", []string{"running", "room", ""}, 1, ErrOtherList},
		{"WithItsCheckEdited", edit(func(b []byte) []byte { b[1] ^= 1; return b }), "jobs", []string{"running", "room", ""}, 1, ErrOtherList},
		{"CutShort", edit(func(b []byte) []byte { return b[:len(b)-1] }), "jobs", []string{"running", "room", ""}, 1, ErrMalformed},
		{"OfAnotherVersion", edit(func(b []byte) []byte { b[0] = 2; return b }), "jobs", []string{"running", "room", ""}, 1, ErrMalformed},
		{"WithTooFewFields", good, "jobs", []string{"running", "room", ""}, 2, ErrMalformed},
		{"NotBase64URL", "a+b/c==", "jobs", nil, 1, ErrMalformed},
		{"MadeOfAnIDAlone", "42", "jobs", nil, 1, ErrMalformed},
		{"LongerThanMaxLen", strings.Repeat("A", MaxLen+1), "jobs", nil, 1, ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(tc.token, tc.list, tc.filter, tc.fields)
			if !errors.Is(err, tc.want) {
				t.Fatalf("%v, want %v", err, tc.want)
			}
			if !fault.Is(err, fault.InvalidArgument) {
				t.Fatalf("%v is not an invalid argument", err)
			}
		})
	}
}
