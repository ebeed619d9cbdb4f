package hostkit

import (
	"errors"
	"fmt"

	toolhostv1 "github.com/turncli/turncli/gen/turncli/toolhost/v1"
)

// Why the primary refused a toolkit; a RegistrationError wraps one of them.
var (
	// ErrNameTaken: a live tool host already serves a toolkit of that name.
	ErrNameTaken = errors.New("the name is served by another tool host")
	// ErrReserved: the name belongs to a toolkit built into the primary.
	ErrReserved = errors.New("the name is built into the primary")
	// ErrInvalid: the registration is malformed (name, schema or definition).
	ErrInvalid = errors.New("the registration is invalid")
)

// RegistrationError is the primary's refusal of a toolkit. Run returns it: a host whose
// toolkit cannot be registered is misconfigured, and retrying would not help.
type RegistrationError struct {
	Toolkit string
	// Message is the primary's explanation.
	Message string
	// Reason is ErrNameTaken, ErrReserved or ErrInvalid.
	Reason error
}

func (e *RegistrationError) Error() string {
	return fmt.Sprintf("toolkit %q was not registered: %s", e.Toolkit, e.Message)
}

// Unwrap returns the reason, for errors.Is.
func (e *RegistrationError) Unwrap() error { return e.Reason }

func registrationError(r *toolhostv1.ToolkitRegistered) *RegistrationError {
	reason := ErrInvalid
	switch r.GetRejection().GetReason() {
	case toolhostv1.RejectionReason_REJECTION_REASON_NAME_TAKEN:
		reason = ErrNameTaken
	case toolhostv1.RejectionReason_REJECTION_REASON_RESERVED:
		reason = ErrReserved
	}
	return &RegistrationError{Toolkit: r.GetName(), Message: r.GetRejection().GetMessage(), Reason: reason}
}
