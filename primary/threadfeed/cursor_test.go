package threadfeed

import (
	"strings"
	"testing"
)

func TestCursor(t *testing.T) {
	t.Run("ACursorTheFeedGaveReadsBackAsItsPlace", func(t *testing.T) {
		for _, p := range []place{{}, {event: 7}, {event: 7, chunks: 0, mid: true}, {event: 1 << 62, chunks: 12, mid: true}} {
			got, err := parseCursor(p.cursor())
			if err != nil || got != p {
				t.Errorf("cursor %q reads back as %+v, %v; want %+v", p.cursor(), got, err, p)
			}
		}
		if p, err := parseCursor(""); err != nil || p != (place{}) {
			t.Errorf("the empty cursor is %+v, %v; want the start", p, err)
		}
	})
	t.Run("ACursorTheFeedDidNotGiveIsRefused", func(t *testing.T) {
		for _, c := range []Cursor{"x", "-1", "07", "7.", ".3", "7.-1", "7.03", "0.0", "7.3.1", "+7",
			Cursor(strings.Repeat("1", MaxCursorBytes+1))} {
			if _, err := parseCursor(c); err != errCursor {
				t.Errorf("cursor %q: %v, want the refusal", c, err)
			}
		}
	})
}
