// Package fault is the primary's one vocabulary of failures: engines and the store return an
// *Error of some Kind with a message the caller may read, and nothing else chooses a status.
// The gRPC edge (package faultgrpc) maps each Kind to one gRPC code, and each REST edge maps
// that code to one HTTP status.
//
// It owns the kinds, the error type and its constructors, and the one rule for hiding a fault
// from its caller (Hide). It does not know gRPC or HTTP, and it holds no message texts of its
// own beyond the one shown for an internal fault: each domain keeps its texts next to the rule
// they state.
//
// An error whose chain holds no *Error is a fault of the primary (Internal): it is logged with
// an id and answered with a message naming that id, never with its own text.
package fault

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"
)

// Kind says which class of failure an Error is, and so which status the caller sees.
type Kind uint8

// The kinds in use. The zero Kind is Internal, so a zero Error is never mistaken for the
// caller's mistake.
const (
	// Internal: a fault of the primary, never the caller's mistake.
	Internal Kind = iota
	// InvalidArgument: the request is malformed, or names something the caller should know
	// does not exist (an unknown tool, a bad cursor).
	InvalidArgument
	// NotFound: the record or response the request names does not exist.
	NotFound
	// AlreadyExists: the request would create what another holder already has.
	AlreadyExists
	// Conflict: the request is well formed but lost to the current state of what it names: a
	// decision already taken, a stale revision, a call id reused, a window that ended, a
	// fenced response. Retrying the same request cannot succeed.
	Conflict
	// FailedPrecondition: the system is not in a state that allows the request, and says what
	// must change first (a gate that refuses, a job that already finished, a failed preflight).
	FailedPrecondition
	// LimitExceeded: a count the primary bounds (open responses, receipts, operations at once,
	// running jobs) is at its limit; the request may succeed once something finishes.
	LimitExceeded
	// TooLarge: the request document is over the size its route accepts.
	TooLarge
	// PermissionDenied: the caller is known but may not do this.
	PermissionDenied
	// Unauthenticated: the caller's credential is missing or not valid here.
	Unauthenticated
	// Unavailable: the service cannot answer now (stopping, not configured, a store that could
	// not be read); the caller may try again later.
	Unavailable
	// Canceled: the caller cancelled the request.
	Canceled
	// DeadlineExceeded: the request's deadline passed.
	DeadlineExceeded
)

var kindNames = [...]string{
	Internal: "internal", InvalidArgument: "invalid argument", NotFound: "not found",
	AlreadyExists: "already exists", Conflict: "conflict", FailedPrecondition: "failed precondition",
	LimitExceeded: "limit exceeded", TooLarge: "too large", PermissionDenied: "permission denied",
	Unauthenticated: "unauthenticated", Unavailable: "unavailable", Canceled: "canceled",
	DeadlineExceeded: "deadline exceeded",
}

// Kinds lists every Kind, for tables that must cover them all.
func Kinds() []Kind {
	out := make([]Kind, len(kindNames))
	for i := range out {
		out[i] = Kind(i)
	}
	return out
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Error is a failure of a Kind with a message the caller may read.
//
// Wrapping an Error (fmt.Errorf("%w: …", err)) keeps its Kind, and the whole wrapped text
// becomes the caller's message: wrap only with words a caller may read, and log anything
// private instead.
type Error struct {
	Kind Kind
	// Message is shown to the caller as is: it must never hold a credential or an internal
	// error's text.
	Message string
	// Details are machine-readable explanations sent along with the status (for example a
	// google.rpc.PreconditionFailure listing each problem).
	Details []proto.Message
	// ID is the error_id of the log line that records the fault this Error stands in for
	// (Hidden sets it); empty when the message tells the caller all there is.
	ID string
}

func (e *Error) Error() string { return e.Message }

// New returns an Error of kind k with a fixed message.
func New(k Kind, msg string) *Error { return &Error{Kind: k, Message: msg} }

// Newf returns an Error of kind k with a formatted message. Its arguments are formatted, not
// wrapped: an error among them adds its text, never its Kind.
func Newf(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// WithDetails returns an Error of kind k with a message and machine-readable details.
func WithDetails(k Kind, msg string, details ...proto.Message) *Error {
	return &Error{Kind: k, Message: msg, Details: details}
}

// KindOf returns the Kind of the first Error in err's chain, Canceled or DeadlineExceeded for
// an ended context, and Internal for anything else. ok is false for Internal faults that are
// not Errors (their text is not the caller's to read).
func KindOf(err error) (k Kind, ok bool) {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e.Kind, true
	case errors.Is(err, context.Canceled):
		return Canceled, true
	case errors.Is(err, context.DeadlineExceeded):
		return DeadlineExceeded, true
	}
	return Internal, false
}

// Is reports whether err's chain holds an Error of kind k (or, for Canceled and
// DeadlineExceeded, an ended context).
func Is(err error, k Kind) bool {
	got, _ := KindOf(err)
	return err != nil && got == k
}

// Public returns what the caller is told about err: its Kind, the message a caller may read,
// and its details. An error that is not an Error is Internal with InternalText alone: hide it
// first (Hide, Hidden) so the caller's message names the line that records it.
func Public(err error) (k Kind, msg string, details []proto.Message) {
	k, ok := KindOf(err)
	if !ok {
		return Internal, InternalText, nil
	}
	var e *Error
	if errors.As(err, &e) {
		details = e.Details
	}
	switch k {
	case Canceled:
		if e == nil {
			return k, "request cancelled", nil
		}
	case DeadlineExceeded:
		if e == nil {
			return k, "request deadline exceeded", nil
		}
	}
	return k, err.Error(), details
}
