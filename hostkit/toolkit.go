package hostkit

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	toolhostv1 "github.com/turncli/turncli/gen/turncli/toolhost/v1"
)

// Toolkit is a named group of functions a Host serves.
type Toolkit struct {
	// Name is the toolkit's selector, 1..128 characters, unique on the primary.
	Name string
	// Description is shown by discovery, also before a deferred toolkit is loaded.
	Description string
	// Instructions apply to every function; describe lists them first.
	Instructions []string
	// Deferred toolkits are announced by name and description only; the primary asks for the
	// functions (hostkit answers with Functions) the first time a response describes or calls
	// one.
	Deferred bool
	// Functions in catalog order. Build them with Func or RawFunc.
	Functions []Function
}

// Handler runs one call. args is the arguments object as JSON text, already valid against the
// function's input schema; the result is marshalled with encoding/json. ctx ends when the
// primary cancels the call (its response closed), when the connection drops, or when the host's
// stop grace runs out; the handler must then return promptly. Handlers run concurrently.
type Handler func(ctx context.Context, c Call, args json.RawMessage) (any, error)

// Function is one callable function.
type Function struct {
	Name        string
	Description string
	// Instructions specific to this function; describe lists them after the toolkit's.
	Instructions []string
	// InputSchema is the JSON Schema of the arguments object; empty accepts any object.
	InputSchema json.RawMessage
	Handler     Handler
	// Traits tell the primary's shell modes how calls behave; the zero value means a call
	// finishes inside the command that makes it. Set them with WithTraits.
	Traits Traits

	err error // from Func's schema derivation; New reports it
}

// Func builds a function from a typed Go function. The input schema is derived from In (a
// struct, or a pointer to one; see InputSchema); the arguments are decoded into In with
// encoding/json and the Out value is encoded the same way. A returned error fails the call with
// its text as the outcome, so it must not contain secrets.
func Func[In, Out any](name, description string, fn func(ctx context.Context, c Call, in In) (Out, error)) Function {
	schema, err := InputSchema[In]()
	if err != nil {
		err = fmt.Errorf("hostkit: function %q: %w", name, err)
	}
	return Function{
		Name: name, Description: description, InputSchema: schema, err: err,
		Handler: func(ctx context.Context, c Call, args json.RawMessage) (any, error) {
			var in In
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, fmt.Errorf("arguments do not fit %s: %v", name, err)
			}
			return fn(ctx, c, in)
		},
	}
}

// RawFunc builds a function from a hand-written schema and a handler of raw JSON.
func RawFunc(name, description string, schema json.RawMessage, h Handler) Function {
	return Function{Name: name, Description: description, InputSchema: schema, Handler: h}
}

// WithInstructions returns f with instructions added.
func (f Function) WithInstructions(lines ...string) Function {
	f.Instructions = append(append([]string(nil), f.Instructions...), lines...)
	return f
}

// Identity says on whose behalf a call runs. The primary takes it from the response, never from
// the arguments, so a tool may trust it.
type Identity struct {
	ResponseID string
	Agent      string
	Requester  string
	Channel    string
	Thread     string
}

// Call is one call as a handler sees it.
type Call struct {
	// ID is the primary's id of the call on the current connection.
	ID string
	// AgentCLICallID is the receipt's call id (unique within its response only).
	AgentCLICallID string
	Toolkit        string
	Function       string
	Identity       Identity
	// BashCallID is the Bash tool call whose command made the call.
	BashCallID string

	state *callState
}

// Waiting marks the call as waiting for something outside the tool (a person's answer, a
// job); the receipt shows "waiting" until Running or the result.
func (c Call) Waiting() { c.state.progress(toolhostv1.CallState_CALL_STATE_WAITING) }

// Running marks the call as working again.
func (c Call) Running() { c.state.progress(toolhostv1.CallState_CALL_STATE_RUNNING) }

// Attach adds a media attachment to the call's result. Attachments are kept only when the call
// succeeds.
func (c Call) Attach(a Attachment) {
	if c.state == nil {
		return
	}
	c.state.mu.Lock()
	defer c.state.mu.Unlock()
	if !c.state.finished {
		c.state.attachments = append(c.state.attachments, a)
	}
}

// AttachmentKind is what an attachment holds.
type AttachmentKind string

// Attachment kinds.
const (
	Image AttachmentKind = "image"
	Audio AttachmentKind = "audio"
	Video AttachmentKind = "video"
	File  AttachmentKind = "file"
)

var attachmentKinds = map[AttachmentKind]toolhostv1.AttachmentKind{
	Image: toolhostv1.AttachmentKind_ATTACHMENT_KIND_IMAGE,
	Audio: toolhostv1.AttachmentKind_ATTACHMENT_KIND_AUDIO,
	Video: toolhostv1.AttachmentKind_ATTACHMENT_KIND_VIDEO,
	File:  toolhostv1.AttachmentKind_ATTACHMENT_KIND_FILE,
}

// Attachment is a media reference a call produced.
type Attachment struct {
	Kind AttachmentKind
	// MimeType is required, e.g. "image/png".
	MimeType string
	Name     string
	URI      string
	// Size in bytes, when known.
	Size int64
}

// callState is what a running call shares with its handler's Call.
type callState struct {
	id   string
	send func(*toolhostv1.ConnectRequest) error

	mu          sync.Mutex
	finished    bool
	attachments []Attachment
}

func (s *callState) progress(state toolhostv1.CallState) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock() // held while sending, so no progress follows the result
	if s.finished {
		return
	}
	_ = s.send(&toolhostv1.ConnectRequest{Event: &toolhostv1.ConnectRequest_Progress{Progress: &toolhostv1.CallProgress{CallId: s.id, State: state}}})
}

// finish ends the call and returns its attachments; later progress and attachments are dropped.
func (s *callState) finish() []Attachment {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finished = true
	return s.attachments
}
