package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/turncli/turncli/internal/termtext"
)

// describe is what the CLI prints of a failed request: the primary's message, with enum values
// in the CLI's words, and its code; never the request (which carries the credential).
func describe(err error) string {
	if s, ok := status.FromError(err); ok {
		if s.Code() == codes.Unauthenticated {
			return "the primary refused the operator credential: " + reword(termtext.Inert(s.Message()))
		}
		return fmt.Sprintf("%s (%s)", reword(termtext.Inert(s.Message())), s.Code())
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
			cells[i] = shorten(termtext.Inert(cell), 60)
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
			lines = append(lines, []string{pairs[i] + ":", termtext.Inert(pairs[i+1])})
		}
	}
	return writeColumns(c.stdout, lines)
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
