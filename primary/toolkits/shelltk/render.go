package shelltk

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

const (
	// outputBudget bounds the canonical JSON of stdout and stderr together (their string
	// contents, escapes included), so a result with its other fields stays well under 14 KiB
	// and inside the receipt's 16 KiB outcome budget.
	outputBudget = 12 << 10
	// markerReserve is room kept for the omission marker; it always fits.
	markerReserve = 64
)

// marker replaces the bytes dropped from the middle of a stream.
func marker(n int64) string {
	return fmt.Sprintf("\n[… %d bytes omitted …]\n", n)
}

// renderStreams renders both streams as valid UTF-8 within outputBudget together. A stream
// that needs less than half the budget leaves the rest to the other.
func renderStreams(stdout, stderr *capture) (string, string) {
	oh, ot, od := stdout.parts()
	eh, et, ed := stderr.parts()
	on, en := naturalCost(oh, ot, od), naturalCost(eh, et, ed)
	ob, eb := on, en
	if on+en > outputBudget {
		half := outputBudget / 2
		switch {
		case on < half:
			eb = outputBudget - on
		case en < half:
			ob = outputBudget - en
		default:
			ob, eb = half, outputBudget-half
		}
	}
	return render(oh, ot, od, ob), render(eh, et, ed, eb)
}

// naturalCost is what render needs to show everything a capture kept.
func naturalCost(head, tail []byte, dropped int64) int {
	if dropped == 0 {
		return jsonCost(head) + jsonCost(tail)
	}
	return jsonCost(head) + markerReserve + jsonCost(tail)
}

// render returns head, a marker for the dropped bytes and tail as valid UTF-8 whose JSON string
// contents cost at most budget bytes (invalid UTF-8 shows as U+FFFD). When it must cut more, it
// keeps up to a third of the budget from the start and the rest from the end.
func render(head, tail []byte, dropped int64, budget int) string {
	total := int64(len(head)) + dropped + int64(len(tail))
	front, back := head, tail
	if dropped == 0 {
		whole := append(append(make([]byte, 0, len(head)+len(tail)), head...), tail...)
		if jsonCost(whole) <= budget {
			return sanitize(whole)
		}
		front, back = whole, whole
	}
	room := max(budget-markerReserve, 0)
	keepFront := prefixWithin(front, room/3)
	keepBack := suffixWithin(back, room-jsonCost(front[:keepFront]))
	if dropped == 0 {
		keepBack = min(keepBack, len(back)-keepFront) // one text: the two ends must not overlap
	}
	var b strings.Builder
	b.WriteString(sanitize(front[:keepFront]))
	b.WriteString(marker(total - int64(keepFront) - int64(keepBack)))
	b.WriteString(sanitize(back[len(back)-keepBack:]))
	return b.String()
}

func sanitize(b []byte) string {
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// prefixWithin returns the length of the longest prefix of b, ending on a character boundary,
// whose JSON cost is at most budget.
func prefixWithin(b []byte, budget int) int {
	n, cost := 0, 0
	for n < len(b) {
		r, size := utf8.DecodeRune(b[n:])
		if cost += runeCost(r, size); cost > budget {
			break
		}
		n += size
	}
	return n
}

// suffixWithin returns the length of the longest suffix of b, starting on a character boundary,
// whose JSON cost is at most budget.
func suffixWithin(b []byte, budget int) int {
	n, cost := 0, 0
	for n < len(b) {
		r, size := utf8.DecodeLastRune(b[:len(b)-n])
		if cost += runeCost(r, size); cost > budget {
			break
		}
		n += size
	}
	return n
}

// jsonCost is the length of b's sanitized text inside a canonical JSON string, or more.
func jsonCost(b []byte) int {
	cost := 0
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		cost += runeCost(r, size)
		i += size
	}
	return cost
}

// runeCost is the length of one decoded rune inside a canonical JSON string: short escapes for
// '"', '\\' and \b \f \n \r \t, \u00xx for other control characters, raw UTF-8 otherwise. An
// invalid byte counts as the three bytes of U+FFFD (sanitize merges a run of them into one).
func runeCost(r rune, size int) int {
	switch {
	case r == utf8.RuneError && size == 1:
		return 3
	case r == '"' || r == '\\' || r == '\b' || r == '\f' || r == '\n' || r == '\r' || r == '\t':
		return 2
	case r < 0x20:
		return 6
	}
	return size
}
