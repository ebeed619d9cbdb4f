package termtext

import (
	"io"
	"strings"
	"unicode/utf8"
)

// Writer passes a stream of text, such as a job's log, on to a terminal. It keeps newlines,
// tabs and printable text; it drops whole escape sequences (colours, cursor movement, screen
// clearing, window titles, hyperlinks), since shown as text they would only clutter the lines;
// and it shows every other control character, format character and byte that is not UTF-8 as
// a Go escape, as Inert does. A carriage return before a newline is dropped with it (CRLF line
// ends); any other is shown as \r, so it cannot overwrite what the line showed.
//
// A sequence or a UTF-8 character cut between two writes is completed by the next; Flush ends
// the stream and shows what was left incomplete. A string sequence (a title, a hyperlink)
// missing its terminator ends at the next newline, so it cannot swallow the rest of the stream.
type Writer struct {
	w       io.Writer
	state   state
	pending []byte // the start of a UTF-8 character cut at the end of a write
	cr      bool   // a carriage return waiting for what follows it
}

// state is where the writer is in an escape sequence (ECMA-48).
type state int

const (
	ground    state = iota // text
	escape                 // after ESC
	escInter               // after ESC and intermediate bytes: ESC ( B
	csi                    // a control sequence: ESC [ ... final byte
	str                    // a control string: OSC, DCS, SOS, PM or APC, until BEL or ST
	strEscape              // after ESC inside a control string: ESC \ is ST
)

const (
	esc = 0x1b
	bel = 0x07
	// The C1 forms of CSI, ST and the control string introducers, which terminals in UTF-8
	// mode may honour as their ESC forms.
	c1CSI = 0x9b
	c1ST  = 0x9c
)

// Text returns s as a Writer shows it: for text that keeps its lines, such as a log's tail.
func Text(s string) string {
	var b strings.Builder
	w := NewWriter(&b)
	w.Write([]byte(s)) // a strings.Builder does not fail
	w.Flush()
	return b.String()
}

// NewWriter returns a Writer that writes the filtered text to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write filters p and writes the result; it reports all of p written unless w failed.
func (t *Writer) Write(p []byte) (int, error) {
	data := p
	if len(t.pending) > 0 {
		data = append(t.pending, p...)
		t.pending = nil
	}
	var b strings.Builder
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			if !utf8.FullRune(data[i:]) {
				t.pending = append([]byte(nil), data[i:]...)
				break
			}
			t.invalid(&b, data[i])
			i++
			continue
		}
		t.step(&b, r)
		i += size
	}
	if _, err := io.WriteString(t.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush ends the stream: a carriage return and a cut UTF-8 character left waiting are shown,
// an escape sequence left incomplete is dropped (a lone ESC is shown).
func (t *Writer) Flush() error {
	var b strings.Builder
	t.takeCR(&b)
	if t.state == escape {
		b.WriteString(`\x1b`)
	}
	for _, c := range t.pending {
		writeByteEscape(&b, c)
	}
	t.state, t.pending = ground, nil
	_, err := io.WriteString(t.w, b.String())
	return err
}

// invalid handles a byte that is not UTF-8: it ends any sequence and is shown.
func (t *Writer) invalid(b *strings.Builder, c byte) {
	t.takeCR(b)
	t.state = ground
	writeByteEscape(b, c)
}

func (t *Writer) takeCR(b *strings.Builder) {
	if t.cr {
		t.cr = false
		b.WriteString(`\r`)
	}
}

// step handles one rune in the current state.
func (t *Writer) step(b *strings.Builder, r rune) {
	switch t.state {
	case ground:
		if t.cr && r == '\n' {
			t.cr = false
			b.WriteByte('\n')
			return
		}
		t.takeCR(b)
		switch r {
		case '\n', '\t':
			b.WriteRune(r)
		case '\r':
			t.cr = true
		case esc:
			t.state = escape
		case c1CSI:
			t.state = csi
		case 0x90, 0x98, 0x9d, 0x9e, 0x9f: // DCS, SOS, OSC, PM, APC
			t.state = str
		default:
			writeRune(b, r)
		}
	case escape:
		switch {
		case r == '[':
			t.state = csi
		case r == ']' || r == 'P' || r == 'X' || r == '^' || r == '_':
			t.state = str
		case r >= 0x20 && r <= 0x2f:
			t.state = escInter
		case r >= 0x30 && r <= 0x7e:
			t.state = ground // a two-character sequence, dropped
		default: // not a sequence: the ESC is shown, r is text
			b.WriteString(`\x1b`)
			t.state = ground
			t.step(b, r)
		}
	case escInter:
		switch {
		case r >= 0x20 && r <= 0x2f:
		case r >= 0x30 && r <= 0x7e:
			t.state = ground
		default:
			t.state = ground
			t.step(b, r)
		}
	case csi:
		switch {
		case r >= 0x20 && r <= 0x3f: // parameters and intermediates
		case r >= 0x40 && r <= 0x7e: // the final byte
			t.state = ground
		default: // a broken sequence: dropped, r is text
			t.state = ground
			t.step(b, r)
		}
	case str:
		switch r {
		case bel, c1ST:
			t.state = ground
		case esc:
			t.state = strEscape
		case '\n':
			t.state = ground
			t.step(b, r)
		}
	case strEscape:
		if r == '\\' {
			t.state = ground
			return
		}
		t.state = escape // the ESC began a new sequence
		t.step(b, r)
	}
}
