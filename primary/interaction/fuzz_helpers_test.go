package interaction

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/turncli/turncli/internal/canonjson"
)

// The fuzz targets of this package feed each validator what a call's arguments are after
// admission: a strict-JSON object read from the fuzzed bytes (bytes that are not one are
// skipped). Each checks that what the validator accepts obeys the contract's rules, checked
// here on their own, and that the accepted value written back as arguments is accepted again
// as the same value.

// fuzzArgs reads fuzzed bytes as call arguments.
func fuzzArgs(data []byte) (map[string]any, bool) {
	args, err := canonjson.ParseObject(data)
	return args, err == nil
}

// maxRefusalBytes bounds a refusal's text: it names a field and a rule, and must not echo a
// long argument back to the model.
const maxRefusalBytes = 600

func checkRefusal(t *testing.T, data []byte, err error) {
	t.Helper()
	if n := len(err.Error()); n > maxRefusalBytes {
		t.Fatalf("arguments %.200q: refusal of %d bytes: %.300s", data, n, err)
	}
	if !utf8.ValidString(err.Error()) {
		t.Fatalf("arguments %.200q: refusal is not valid UTF-8: %q", data, err)
	}
}

// trimmedChars reports whether s has no surrounding white space and least..most characters.
func trimmedChars(s string, least, most int) bool {
	n := utf8.RuneCountInString(s)
	return s == strings.TrimSpace(s) && n >= least && n <= most
}

// stringField returns args[key] when it is a string.
func stringField(args map[string]any, key string) (s string, isString, present bool) {
	v, present := args[key]
	s, isString = v.(string)
	return s, isString, present
}

// withSizes is seeds of one string field at sizes around a limit of most characters, in
// multi-byte characters and padded with white space that trimming removes.
func withSizes(key string, most int, rest string) []string {
	var out []string
	for _, n := range []int{0, 1, most, most + 1} {
		for _, s := range []string{strings.Repeat("x", n), strings.Repeat("é", n), " \t" + strings.Repeat("ü", n) + "\n "} {
			b, _ := canonjson.Marshal(s)
			out = append(out, `{"`+key+`":`+string(b)+rest+`}`)
		}
	}
	return out
}
