package dashboard

import (
	"html"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Job output keeps its ANSI colours on the page without ever becoming markup: each run of
// text is HTML-escaped first, and SGR (Select Graphic Rendition) codes only choose classes
// from a fixed set (b, f, i, u, fg-0…fg-15, bg-0…bg-15), so no byte of output reaches an
// attribute. 256-colour and 24-bit colours take the nearest of the 16 terminal colours.
// Every other escape or control sequence (cursor movement, titles, links) is dropped.
//
// A job's log is read in chunks, so the converter is resumable: it takes the state left by
// the previous chunk and stops before an escape sequence or a UTF-8 character cut at the
// chunk's end, reporting how much it consumed.

// sgrState is the graphic rendition in force: colours are 0..15, or -1 for the default.
type sgrState struct {
	fg, bg                          int
	bold, faint, italic, underlined bool
}

var plain = sgrState{fg: -1, bg: -1}

// classes is the state as a class list, "" for plain text.
func (s sgrState) classes() string {
	var c []string
	for _, f := range []struct {
		on   bool
		name string
	}{{s.bold, "b"}, {s.faint, "f"}, {s.italic, "i"}, {s.underlined, "u"}} {
		if f.on {
			c = append(c, f.name)
		}
	}
	if s.fg >= 0 {
		c = append(c, "fg-"+strconv.Itoa(s.fg))
	}
	if s.bg >= 0 {
		c = append(c, "bg-"+strconv.Itoa(s.bg))
	}
	return strings.Join(c, " ")
}

// parseSGRState reads a class list back (as the page passes it to fetch the next chunk);
// anything not in the fixed set is ignored.
func parseSGRState(list string) sgrState {
	s := plain
	for _, c := range strings.Fields(list) {
		switch c {
		case "b":
			s.bold = true
		case "f":
			s.faint = true
		case "i":
			s.italic = true
		case "u":
			s.underlined = true
		default:
			for prefix, dst := range map[string]*int{"fg-": &s.fg, "bg-": &s.bg} {
				if n, err := strconv.Atoi(strings.TrimPrefix(c, prefix)); strings.HasPrefix(c, prefix) && err == nil && n >= 0 && n < 16 {
					*dst = n
				}
			}
		}
	}
	return s
}

// maxEscape bounds how long an unterminated escape sequence may be before it is taken as
// garbage rather than cut by the chunk's end.
const maxEscape = 256

// renderANSI converts data, which follows output rendered in state st, to escaped HTML. With
// more set, an escape sequence or UTF-8 character cut at the end is left unconsumed for the
// next chunk; without it, it is dropped. It returns the HTML, the state at its end and the
// number of bytes consumed.
func renderANSI(st sgrState, data []byte, more bool) (string, sgrState, int) {
	var out, text strings.Builder
	flush := func() {
		if text.Len() == 0 {
			return
		}
		escaped := html.EscapeString(strings.ToValidUTF8(text.String(), "\uFFFD"))
		if c := st.classes(); c != "" {
			out.WriteString(`<span class="` + c + `">` + escaped + `</span>`)
		} else {
			out.WriteString(escaped)
		}
		text.Reset()
	}
	i := 0
	for i < len(data) {
		b := data[i]
		switch {
		case b == 0x1b:
			n, params, isSGR, complete := scanEscape(data[i:])
			if !complete {
				if more && len(data)-i < maxEscape {
					flush()
					return out.String(), st, i
				}
				n = 1 // garbage: drop the ESC alone
			}
			if isSGR {
				next := applySGR(st, params)
				if next != st {
					flush()
					st = next
				}
			}
			i += n
		case b == '\n' || b == '\t':
			text.WriteByte(b)
			i++
		case b < 0x20 || b == 0x7f: // other controls, carriage returns included, are dropped
			i++
		case b < utf8.RuneSelf:
			text.WriteByte(b)
			i++
		default:
			if more && !utf8.FullRune(data[i:]) {
				flush()
				return out.String(), st, i
			}
			_, size := utf8.DecodeRune(data[i:])
			text.Write(data[i : i+size])
			i += size
		}
	}
	flush()
	return out.String(), st, i
}

// scanEscape measures the escape sequence at the start of seq (seq[0] is ESC): CSI
// (ESC [ … final byte), OSC (ESC ] … BEL or ESC \) or a two-byte escape. For an SGR (a CSI
// ending in m) it returns the parameters.
func scanEscape(seq []byte) (n int, params string, isSGR, complete bool) {
	if len(seq) < 2 {
		return 0, "", false, false
	}
	switch seq[1] {
	case '[':
		for j := 2; j < len(seq); j++ {
			if c := seq[j]; c >= 0x40 && c <= 0x7e {
				return j + 1, string(seq[2:j]), c == 'm', true
			}
		}
		return 0, "", false, false
	case ']':
		for j := 2; j < len(seq); j++ {
			if seq[j] == 0x07 {
				return j + 1, "", false, true
			}
			if seq[j] == 0x1b && j+1 < len(seq) && seq[j+1] == '\\' {
				return j + 2, "", false, true
			}
		}
		return 0, "", false, false
	default:
		return 2, "", false, true
	}
}

// applySGR applies the parameters of one SGR sequence ("1;31", "38;5;208", "" for reset).
func applySGR(st sgrState, params string) sgrState {
	fields := strings.FieldsFunc(params, func(r rune) bool { return r == ';' || r == ':' })
	if len(fields) == 0 {
		return plain
	}
	nums := make([]int, len(fields))
	for k, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil {
			return st // not an SGR we understand: keep the state
		}
		nums[k] = n
	}
	for k := 0; k < len(nums); k++ {
		switch n := nums[k]; {
		case n == 0:
			st = plain
		case n == 1:
			st.bold = true
		case n == 2:
			st.faint = true
		case n == 3:
			st.italic = true
		case n == 4:
			st.underlined = true
		case n == 22:
			st.bold, st.faint = false, false
		case n == 23:
			st.italic = false
		case n == 24:
			st.underlined = false
		case n >= 30 && n <= 37:
			st.fg = n - 30
		case n == 39:
			st.fg = -1
		case n >= 40 && n <= 47:
			st.bg = n - 40
		case n == 49:
			st.bg = -1
		case n >= 90 && n <= 97:
			st.fg = n - 90 + 8
		case n >= 100 && n <= 107:
			st.bg = n - 100 + 8
		case n == 38 || n == 48:
			c, used := extendedColour(nums[k+1:])
			k += used
			if c >= 0 {
				if n == 38 {
					st.fg = c
				} else {
					st.bg = c
				}
			}
		}
	}
	return st
}

// extendedColour reads "5;n" or "2;r;g;b" after a 38 or 48, returning the nearest of the 16
// colours (-1 when malformed) and how many numbers it used.
func extendedColour(rest []int) (int, int) {
	if len(rest) >= 2 && rest[0] == 5 {
		return colour256(rest[1]), 2
	}
	if len(rest) >= 4 && rest[0] == 2 {
		return nearest16(rest[1], rest[2], rest[3]), 4
	}
	return -1, len(rest)
}

// palette16 is xterm's default 16 colours, for nearest-colour matching.
var palette16 = [16][3]int{
	{0, 0, 0}, {205, 0, 0}, {0, 205, 0}, {205, 205, 0}, {0, 0, 238}, {205, 0, 205}, {0, 205, 205}, {229, 229, 229},
	{127, 127, 127}, {255, 0, 0}, {0, 255, 0}, {255, 255, 0}, {92, 92, 255}, {255, 0, 255}, {0, 255, 255}, {255, 255, 255},
}

func colour256(n int) int {
	switch {
	case n < 0 || n > 255:
		return -1
	case n < 16:
		return n
	case n < 232: // the 6x6x6 cube
		n -= 16
		level := func(v int) int {
			if v == 0 {
				return 0
			}
			return 55 + 40*v
		}
		return nearest16(level(n/36), level(n/6%6), level(n%6))
	default: // the grey ramp
		g := 8 + 10*(n-232)
		return nearest16(g, g, g)
	}
}

func nearest16(r, g, b int) int {
	best, bestDist := 0, -1
	for i, p := range palette16 {
		d := (p[0]-r)*(p[0]-r) + (p[1]-g)*(p[1]-g) + (p[2]-b)*(p[2]-b)
		if bestDist < 0 || d < bestDist {
			best, bestDist = i, d
		}
	}
	return best
}
