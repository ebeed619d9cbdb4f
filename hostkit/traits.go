package hostkit

import toolhostv1 "github.com/turncli/turncli/gen/turncli/toolhost/v1"

// Traits say how calls of a function behave beyond their arguments. A response opened in the
// standard shell mode offers only functions with none of them: functions that finish inside the
// Bash command that calls them. The minimal mode offers every function.
type Traits struct {
	// NeedsConfirmation: a person approves each call before it runs; the call waits.
	NeedsConfirmation bool
	// UserInput: the call waits for a person (an approval, an answer).
	UserInput bool
	// ExternalExecution: the call starts work that outlives the calling command (a background
	// job, agent or command).
	ExternalExecution bool
	// EndsTurn: after calling it the agent should end its turn.
	EndsTurn bool
}

// WithTraits returns f with its traits set to t.
func (f Function) WithTraits(t Traits) Function {
	f.Traits = t
	return f
}

// toProto is t on the wire; nil when no trait is set.
func (t Traits) toProto() *toolhostv1.FunctionTraits {
	if t == (Traits{}) {
		return nil
	}
	return &toolhostv1.FunctionTraits{
		NeedsConfirmation: t.NeedsConfirmation,
		UserInput:         t.UserInput,
		ExternalExecution: t.ExternalExecution,
		EndsTurn:          t.EndsTurn,
	}
}
