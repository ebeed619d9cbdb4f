package catalog

import (
	"context"
	"encoding/json"
	"time"

	"github.com/turncli/turncli/internal/bashexec"
)

// Toolkit is a named group of functions the primary can call. Built-in toolkits implement it
// in-process; tool hosts implement it over a stream. Implementations must be safe for
// concurrent use and must return promptly once ctx ends.
type Toolkit interface {
	// Name is the toolkit's selector, 1..128 characters, unique in a registry.
	Name() string
	// Description is shown by discovery before the toolkit is loaded.
	Description() string
	// Deferred reports whether Load is expensive and must wait for the first describe or call.
	Deferred() bool
	// Load returns the toolkit's instructions and functions. The registry calls it once
	// (retrying only after a failure).
	Load(ctx context.Context) (Definition, error)
	// Call runs one function with arguments already validated against its schema. A returned
	// error fails the call with err.Error() as its outcome; it must not contain secrets.
	Call(ctx context.Context, call Call) (Result, error)
}

// Definition is what a toolkit offers once loaded.
type Definition struct {
	// Instructions apply to every function of the toolkit; describe lists them first.
	Instructions []string
	// Functions in catalog order.
	Functions []Function
}

// Function is one callable function.
type Function struct {
	// Name is the function's selector, unique within its toolkit.
	Name string
	// Description is shown by discovery.
	Description string
	// InputSchema is a JSON Schema (draft 2020-12 unless it says otherwise) for the arguments
	// object. Empty means any object.
	InputSchema json.RawMessage
	// Instructions specific to this function; describe lists them after the toolkit's.
	Instructions []string
	// Traits say how calls of the function behave beyond their arguments.
	Traits Traits
}

// Traits describe a function's behaviour to the shell modes and to dispatch. The standard
// shell mode offers only functions with none of them: functions that finish inside the
// command that calls them.
type Traits struct {
	// NeedsConfirmation: a person approves each call before it runs; the call waits.
	NeedsConfirmation bool
	// UserInput: the call waits for a person (an approval, an answer).
	UserInput bool
	// ExternalExecution: the call starts work that outlives the calling command (a
	// background job, agent or command).
	ExternalExecution bool
	// EndsTurn: after calling it the agent should end its turn.
	EndsTurn bool
}

// Any reports whether any trait is set.
func (t Traits) Any() bool {
	return t.NeedsConfirmation || t.UserInput || t.ExternalExecution || t.EndsTurn
}

// Identity says on whose behalf a call runs. It comes from the response, never from arguments.
type Identity struct {
	ResponseID string
	Agent      string
	Requester  string
	Channel    string
	Thread     string
	// Origin is why the turn runs ("foreground", "background", …).
	Origin string
	// WorkerKey names the workers the response's shells run on; empty for the primary.
	WorkerKey string
	// Flags are the response's flags (a private copy).
	Flags []string
}

// Call is one admitted call, as the toolkit sees it.
type Call struct {
	ID       string
	Toolkit  string
	Function string
	// Arguments is a private, frozen copy taken at admission (strict-JSON values, see canonjson).
	Arguments map[string]any
	Identity  Identity
	// BashCallID is the Bash command whose window admitted the call.
	BashCallID string
	// Progress lets a long call report that it is waiting on something outside (a person, a job).
	Progress Progress
	// Shell runs nested commands where the response runs its shells, inside the calling window.
	Shell ShellRunner
	// Lifetime ends when the response closes. Work a call leaves running after it returns (a
	// nested command continued in the background) must stop when it ends.
	Lifetime context.Context
}

// Progress reports a running call's status changes.
type Progress interface {
	// Waiting marks the call as waiting for something outside the tool.
	Waiting()
	// Running marks it as working again.
	Running()
}

// ShellRunner runs a nested Bash command for a call. The command's environment names the
// calling command's window, so its own CLI calls join that window.
type ShellRunner interface {
	RunNested(ctx context.Context, command string, timeout time.Duration, out bashexec.Output) (bashexec.Result, error)
}

// Result is a successful call's outcome.
type Result struct {
	// Value is any JSON value (anything canonjson.Marshal accepts).
	Value any
	// Attachments are media references produced by the call.
	Attachments []Attachment
}

// Attachment is a media reference on a receipt.
type Attachment struct {
	Kind     string `json:"kind"` // image, audio, video or file
	MimeType string `json:"mime_type"`
	Name     string `json:"name,omitempty"`
	URI      string `json:"uri,omitempty"`
	Size     int64  `json:"size,omitempty"`
	// Omitted says why URI was left out (its inline data went over the receipt's budget).
	Omitted string `json:"omitted,omitempty"`
}
