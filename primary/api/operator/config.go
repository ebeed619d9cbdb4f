package operator

import (
	"fmt"
	"log/slog"
	"reflect"

	"github.com/turncli/turncli/primary/events"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/store"
)

// Config is what the operator service needs. Every engine is required: the primary always
// runs them all, so no method has to answer that its engine is missing.
type Config struct {
	// Store is what the service reads and writes itself.
	Store Store
	// Jobs is behind ListJobs, GetJob, GetJobLog and CancelJob.
	Jobs Jobs
	// Approvals decides approvals (DecideApproval); listing and reading them use Store.
	Approvals Approvals
	// Prompts is behind ListPrompts, GetPrompt and DecidePrompt.
	Prompts Prompts
	// Allowances is behind ListPermissionAllowances and RevokePermissionAllowance.
	Allowances Allowances
	// Questions is behind ListQuestions, GetQuestion, SaveQuestionDraft,
	// SubmitQuestionAnswers and CancelQuestion.
	Questions Questions
	// Progress is behind ListProgress.
	Progress Progress
	// Responses is the source of ListResponses.
	Responses *response.Manager
	// Events is the feed WatchEvents streams.
	Events *events.Bus
	// CallApprovals is behind ListCallApprovals, GetCallApproval and DecideCallApproval.
	CallApprovals CallApprovals
	// Workers is the source of ListWorkers.
	Workers Workers
	// ShellModes stores the shell modes; ShellPreflight checks an agent's shell before the
	// minimal mode is stored.
	ShellModes     store.ShellModes
	ShellPreflight ShellPreflight
	// IdentityLinks is behind ListIdentityLinks, LinkIdentity and UnlinkIdentity.
	IdentityLinks store.IdentityLinks
	// Logger is optional (discarded when nil).
	Logger *slog.Logger
}

// validate names the first required field that is missing.
func (c Config) validate() error {
	for _, f := range []struct {
		name string
		v    any
	}{
		{"Store", c.Store}, {"Jobs", c.Jobs}, {"Approvals", c.Approvals}, {"Prompts", c.Prompts},
		{"Allowances", c.Allowances}, {"Questions", c.Questions}, {"Progress", c.Progress},
		{"Responses", c.Responses}, {"Events", c.Events}, {"CallApprovals", c.CallApprovals},
		{"Workers", c.Workers}, {"ShellModes", c.ShellModes}, {"ShellPreflight", c.ShellPreflight},
		{"IdentityLinks", c.IdentityLinks},
	} {
		if missing(f.v) {
			return fmt.Errorf("operator: Config.%s is required", f.name)
		}
	}
	return nil
}

// missing reports whether v is nil, a nil pointer held in an interface included (the
// response manager's CallApprovals is nil when it was built without them).
func missing(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Func, reflect.Slice, reflect.Chan:
		return rv.IsNil()
	}
	return false
}
