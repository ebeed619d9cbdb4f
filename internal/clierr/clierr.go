// Package clierr holds the Agent CLI contract's fixed failure texts, the one home of each.
//
// Domain code (catalog, responses) returns them as fault errors of the kind the contract's
// status calls for and never chooses a transport status: the gRPC interceptor (faultgrpc) maps
// the kind to a code once, and the Agent CLI's REST edge maps that code to HTTP once. The texts
// are shown to the caller as is, so they must never contain a credential.
package clierr

import "github.com/turncli/turncli/internal/fault"

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
var ErrUnauthenticated = fault.New(fault.Unauthenticated, UnauthenticatedText)
