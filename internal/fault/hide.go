package fault

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
)

// InternalText is what a caller is told failed when nothing more may be said.
const InternalText = "internal error"

// The processes whose log a hidden fault's message may name (HiddenMessage's owner).
const (
	PrimaryLog = "primary"
	WorkerLog  = "worker"
)

// IDKey is the attribute under which the log line that records a hidden fault carries its id.
const IDKey = "error_id"

// NewID returns a fresh id for a hidden fault: 8 hex digits from crypto/rand, enough to tell one
// line of a log from the others, and saying nothing about the fault.
func NewID() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error
	return hex.EncodeToString(b[:])
}

// Hide writes err to log (nil discards) at ERROR, as msg with attrs and a fresh id under IDKey,
// and returns that id for the reply that stands in for err to name (HiddenMessage, Hidden). It
// is the one way a fault kept from its caller is logged, so every such reply leads to its line.
func Hide(ctx context.Context, log *slog.Logger, err error, msg string, attrs ...any) (id string) {
	id = NewID()
	if log != nil {
		log.ErrorContext(ctx, msg, append([]any{IDKey, id, "err", err}, attrs...)...)
	}
	return id
}

// HiddenMessage is what a caller reads in place of a fault Hide logged as id in the log of owner
// (PrimaryLog, WorkerLog): what failed, the id, and whose log holds the line, as in
// "internal error (id 3f9a1c2e); see the primary's log".
func HiddenMessage(what, id, owner string) string {
	return fmt.Sprintf("%s (id %s); see the %s's log", what, id, owner)
}

// Hidden returns the Internal Error a caller of the primary receives in place of a fault Hide
// logged as id: what failed (InternalText, or words the caller may read) with the id and the
// primary's log.
func Hidden(id, what string) *Error {
	return &Error{Kind: Internal, Message: HiddenMessage(what, id, PrimaryLog), ID: id}
}
