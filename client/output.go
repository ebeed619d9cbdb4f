package client

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/turncli/turncli/internal/canonjson"
)

// result is what a successful command prints: one canonical JSON line and its exit code.
// note, when set, goes to stderr (for example why waiting stopped early).
type result struct {
	out  []byte
	code int
	note string
}

// writeResult prints r and returns its exit code.
func writeResult(stdout, stderr io.Writer, r *result) int {
	fmt.Fprintf(stdout, "%s\n", r.out)
	if r.note != "" {
		fmt.Fprintln(stderr, r.note)
	}
	return r.code
}

// writeError prints {"error":msg} (with "call_id" when the error has one) on stdout and the
// same message on stderr, and returns the error's exit code.
func writeError(stdout, stderr io.Writer, err error) int {
	e := &cliError{code: ExitUnavailable, msg: err.Error()}
	errors.As(err, &e)
	msg := strings.ToValidUTF8(e.msg, "\uFFFD")
	obj := map[string]any{"error": msg}
	if e.callID != "" {
		obj["call_id"] = strings.ToValidUTF8(e.callID, "\uFFFD")
	}
	line, merr := canonjson.Marshal(obj)
	if merr != nil { // cannot happen for two valid strings; keep stdout one JSON line anyway
		line = []byte(`{"error":"mindroom-agent could not encode its error"}`)
	}
	fmt.Fprintf(stdout, "%s\n", line)
	fmt.Fprintln(stderr, msg)
	return e.code
}

// withCallID attaches callID to err unless it already names one.
func withCallID(err error, callID string) error {
	var e *cliError
	if !errors.As(err, &e) {
		e = &cliError{code: ExitUnavailable, msg: err.Error()}
	}
	if e.callID == "" {
		c := *e
		c.callID = callID
		return &c
	}
	return e
}

// receiptStatus returns the status of a receipt, or an error if it has no known status.
func receiptStatus(r *reply) (string, error) {
	s, ok := r.obj["status"].(string)
	if _, known := statusExitCode(s); !ok || !known {
		return "", unavailablef("Agent CLI response is invalid: the receipt has no known status")
	}
	return s, nil
}

// receiptResult prints a receipt with the exit code of its status.
func receiptResult(r *reply) (*result, error) {
	s, err := receiptStatus(r)
	if err != nil {
		return nil, err
	}
	code, _ := statusExitCode(s)
	return &result{out: r.canon, code: code}, nil
}
