package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// describe is what the CLI prints of a failed request: the primary's message, with enum values
// in the CLI's words, and its code; never the request (which carries the credential).
func describe(err error) string {
	if s, ok := status.FromError(err); ok {
		if s.Code() == codes.Unauthenticated {
			return "the primary refused the operator credential: " + reword(inert(s.Message()))
		}
		return fmt.Sprintf("%s (%s)", reword(inert(s.Message())), s.Code())
	}
	return err.Error()
}

var jsonOut = protojson.MarshalOptions{UseProtoNames: true}

// emit prints one message as a line of protojson.
func (c *cli) emit(m proto.Message) error {
	b, err := jsonOut.Marshal(m)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(c.stdout, "%s\n", b)
	return err
}

// table prints rows under a header, columns aligned; every cell is made inert first.
func (c *cli) table(header []string, rows [][]string) error {
	lines := [][]string{header}
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, cell := range r {
			cells[i] = shorten(inert(cell), 60)
		}
		lines = append(lines, cells)
	}
	return writeColumns(c.stdout, lines)
}

// fields prints one record as "name: value" lines, values made inert.
func (c *cli) fields(pairs ...string) error {
	var lines [][]string
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			lines = append(lines, []string{pairs[i] + ":", inert(pairs[i+1])})
		}
	}
	return writeColumns(c.stdout, lines)
}

// inert makes text that an agent, a tool or a job wrote safe to print on a terminal: control
// characters (escape sequences among them), and the invisible characters that reorder or hide
// text, are shown as Go escapes instead of acting. Tabs and newlines are escaped too, so one
// value is one cell.
func inert(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case escaped(r):
			q := fmt.Sprintf("%+q", string(r))
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
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

// escaped reports the runes inert shows as escapes: C0 and C1 controls, DEL, and the format
// characters that change how text around them reads (bidi controls, zero-width characters
// and the like, Unicode category Cf).
func escaped(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || unicode.Is(unicode.Cf, r)
}

// when formats a time for a table: local time to the second, or "-" when unset.
func when(ts *timestamppb.Timestamp) string {
	if ts == nil || (ts.GetSeconds() == 0 && ts.GetNanos() == 0) {
		return "-"
	}
	return ts.AsTime().Local().Format(time.DateTime)
}

// at formats a time for a record's fields: "" (the field is left out) when unset.
func at(ts *timestamppb.Timestamp) string {
	if t := when(ts); t != "-" {
		return t
	}
	return ""
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
