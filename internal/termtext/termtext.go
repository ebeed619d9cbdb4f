// Package termtext makes text that an agent, a tool or a job wrote safe to show on a terminal:
// nothing in it can move the cursor, clear the screen, retitle the window, plant a hyperlink or
// hide or reorder what is shown. It only filters; it neither colours nor lays out text, and it
// does not decide when output is a terminal.
package termtext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Inert returns s as one line that acts on no terminal: control characters (escape sequences
// among them), the invisible format characters that reorder or hide text, and bytes that are
// not UTF-8 are shown as Go escapes (\x1b, \u202e, \xff). Tabs and newlines are escaped too, so
// that one value stays one table cell.
func Inert(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		if r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD") {
			writeByteEscape(&b, s[i])
			continue
		}
		writeRune(&b, r)
	}
	return b.String()
}

func needsEscape(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || escaped(r) {
			return true
		}
	}
	return false
}

// escaped reports the runes shown as escapes: C0 and C1 controls, DEL, and the format
// characters that change how the text around them reads (bidi controls, zero-width characters
// and the like, Unicode category Cf).
func escaped(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || unicode.Is(unicode.Cf, r)
}

// writeRune writes r, as a Go escape when it is escaped.
func writeRune(b *strings.Builder, r rune) {
	if !escaped(r) {
		b.WriteRune(r)
		return
	}
	q := fmt.Sprintf("%+q", string(r))
	b.WriteString(q[1 : len(q)-1])
}

// writeByteEscape writes a byte that is not UTF-8.
func writeByteEscape(b *strings.Builder, c byte) { fmt.Fprintf(b, `\x%02x`, c) }
