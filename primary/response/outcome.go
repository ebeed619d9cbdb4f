package response

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/turncli/turncli/internal/canonjson"
)

// MaxOutcomeBytes is the budget of a receipt's outcome, in bytes of canonical JSON.
const MaxOutcomeBytes = 16 * 1024

// projectOutcome returns the canonical JSON of an outcome within MaxOutcomeBytes. A larger
// outcome becomes a string: the start of its canonical JSON and a visible marker saying it was
// shortened and by how much.
func projectOutcome(v any) []byte {
	full, err := canonjson.Marshal(v)
	if err != nil {
		full, _ = canonjson.Marshal(fmt.Sprintf("Tool returned a result that is not JSON: %v", err))
	}
	if len(full) <= MaxOutcomeBytes {
		return full
	}
	return shorten(string(full), len(full))
}

// errorOutcome is the outcome of a failed call: its message, within budget.
func errorOutcome(msg string) []byte {
	msg = strings.ToValidUTF8(msg, "\uFFFD") // a tool's error text may hold any bytes
	out, _ := canonjson.Marshal(msg)
	if len(out) <= MaxOutcomeBytes {
		return out
	}
	return shorten(msg, len(msg))
}

func shorten(text string, total int) []byte {
	keep := min(MaxOutcomeBytes-256, len(text))
	for {
		prefix := text[:keep]
		for !utf8.ValidString(prefix) { // never cut a character in half
			prefix = prefix[:len(prefix)-1]
		}
		s := prefix + fmt.Sprintf(" … [outcome shortened: %d bytes, first %d shown]", total, len(prefix))
		out, _ := canonjson.Marshal(s)
		if len(out) <= MaxOutcomeBytes {
			return out
		}
		// A byte of text takes at most 6 bytes of JSON (\u00xx): dropping a sixth of the
		// overflow converges without going below what fits.
		keep -= max(1, (len(out)-MaxOutcomeBytes+5)/6)
	}
}
