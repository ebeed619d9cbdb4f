package client

import "fmt"

// Exit codes (contract section 12).
const (
	// ExitCompleted: the call completed, or the operation has no status (discovery, describe,
	// context) and succeeded. Help and completion also exit 0.
	ExitCompleted = 0
	// ExitFailed: the call ended failed or cancelled.
	ExitFailed = 1
	// ExitInvalid: invalid input, or the server rejected the request (HTTP 400/409/413/422).
	ExitInvalid = 2
	// ExitPending: the call is still queued, running or waiting.
	ExitPending = 3
	// ExitUnavailable: authority unavailable (missing or invalid environment, HTTP 401) or an
	// unknown transport outcome (no connection, timeout, other statuses, invalid response).
	ExitUnavailable = 4
)

// Receipt statuses (contract section 6), as Reply.Status returns them.
const (
	StatusQueued    = "queued"
	StatusRunning   = "running"
	StatusWaiting   = "waiting"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
)

// statusExitCode maps a receipt status to the exit code; ok is false for an unknown status.
func statusExitCode(status string) (code int, ok bool) {
	switch status {
	case StatusCompleted:
		return ExitCompleted, true
	case StatusFailed, StatusCancelled:
		return ExitFailed, true
	case StatusQueued, StatusRunning, StatusWaiting:
		return ExitPending, true
	}
	return 0, false
}

// isTerminal reports whether a receipt status will never change again.
func isTerminal(status string) bool {
	code, ok := statusExitCode(status)
	return ok && code != ExitPending
}

// cliError is a failure to do what was asked. It carries its exit code, chosen once where the
// knowledge is, and the call id of the tools call it belongs to, if any.
type cliError struct {
	code   int
	msg    string
	callID string
	status int // the HTTP status that caused it; 0 when no response came
}

func (e *cliError) Error() string { return e.msg }

func invalidf(format string, args ...any) *cliError {
	return &cliError{code: ExitInvalid, msg: fmt.Sprintf(format, args...)}
}

func unavailablef(format string, args ...any) *cliError {
	return &cliError{code: ExitUnavailable, msg: fmt.Sprintf(format, args...)}
}
