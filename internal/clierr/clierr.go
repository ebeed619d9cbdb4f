// Package clierr is the small vocabulary of failures the Agent CLI domain reports.
//
// Domain code (catalog, responses) returns these and never chooses a transport status; the API
// edge maps each Kind to a gRPC code once (agentcli), and the REST error handler maps that code
// to an HTTP status once. Messages are the contract's fixed texts, shown to the caller as is, so
// they must never contain a credential.
package clierr

import (
	"errors"
	"fmt"
)

// Kind says which class of failure an Error is.
type Kind int

const (
	// Unauthenticated: the uniform "authority unavailable" failure (HTTP 401).
	Unauthenticated Kind = iota + 1
	// Conflict: the request is well formed but the response's state refuses it (HTTP 409).
	Conflict
	// Invalid: the request is malformed or names something that does not exist (HTTP 422).
	Invalid
	// Limit: a per-response limit is reached (HTTP 422).
	Limit
	// TooLarge: the operation document is over 64 KiB (HTTP 413).
	TooLarge
)

// Error is a failure with a Kind and a caller-facing message.
type Error struct {
	Kind    Kind
	Message string
}

func (e *Error) Error() string { return e.Message }

// Fixed texts of the contract.
const (
	UnauthenticatedText = "Agent CLI authority is unavailable"
	InvalidOperation    = "Invalid Agent CLI operation"
	InvalidCursor       = "Invalid discovery cursor"
	CatalogRebuilding   = "Agent tool catalog is being rebuilt; retry shortly"
	ContextUnavailable  = "Context document is unavailable"
	SearchTooLarge      = "Tool search exceeds 16 KiB; narrow the query"
	RequestTooLarge     = "Agent CLI request exceeds 64 KiB"
	NoWindow            = "Agent CLI call sent no window; run it from a Bash command of this response"
	WindowEnded         = "Bash call has ended; its window accepts no new calls"
	Fenced              = "Call cancelled before dispatch: the response is fenced"
	CallIDConflict      = "Call ID already belongs to a different operation"
	ReceiptLimit        = "This response already holds 1024 CLI call receipts"
	ConcurrencyLimit    = "At most 64 CLI operations may run at once"
)

// ErrUnauthenticated is the one authentication failure, whatever its cause.
var ErrUnauthenticated = &Error{Kind: Unauthenticated, Message: UnauthenticatedText}

// New returns an Error of kind k with a fixed message.
func New(k Kind, msg string) *Error { return &Error{Kind: k, Message: msg} }

// Invalidf returns an Invalid error with a formatted message.
func Invalidf(format string, args ...any) *Error {
	return &Error{Kind: Invalid, Message: fmt.Sprintf(format, args...)}
}

// KindOf returns the Kind of err, or 0 when err is not an Error (an internal fault).
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}
