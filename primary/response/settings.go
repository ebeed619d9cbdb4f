package response

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/turncli/turncli/internal/cliflag"
)

// Settings are the responses' section of the primary's configuration.
type Settings struct {
	// FastCallBudget is how long a tools.call's answer may wait for the call to settle, so a
	// fast tool is answered terminal in one request (zero: DefaultFastCallBudget; negative:
	// answer at admission; at most MaxFastCallBudget).
	FastCallBudget time.Duration
	// MaxOpen bounds the responses open at once on the primary, and MaxOpenPerCredential those
	// one runtime credential holds (zero: the defaults). Responses the primary opens itself
	// (background jobs, approved calls) count toward MaxOpen but are never refused: they carry
	// work already accepted.
	MaxOpen              int
	MaxOpenPerCredential int
	// ReapEvery is how often responses whose grant expired are closed (zero:
	// DefaultReapEvery).
	ReapEvery time.Duration
	// CallApprovalExpiry is how long a call of a function that needs a person's confirmation
	// waits for a decision; then it expires and fails, and its card closes (zero:
	// DefaultCallApprovalExpiry).
	CallApprovalExpiry time.Duration
	// WorkersOnly refuses responses without a worker key, so no command of an agent runs on
	// the primary's host: for a primary whose shells would share its user, and so its
	// credential files, as in a container.
	WorkersOnly bool
}

// MaxFastCallBudget bounds FastCallBudget: past it a call's first answer would be a long poll
// the caller did not ask for.
const MaxFastCallBudget = time.Second

// DefaultCallApprovalExpiry is Settings.CallApprovalExpiry unless configured: a turn's grant
// lives at most 24 hours (contract section 10), so past that no shell of the turn can read
// the call's receipt and a decision would be about a conversation that has moved on; and a
// day still lets a person who was away overnight decide.
const DefaultCallApprovalExpiry = 24 * time.Hour

// DefaultSettings returns the section's defaults.
func DefaultSettings() Settings {
	return Settings{FastCallBudget: DefaultFastCallBudget, MaxOpen: DefaultMaxOpen, MaxOpenPerCredential: DefaultMaxOpenPerCredential,
		ReapEvery: DefaultReapEvery, CallApprovalExpiry: DefaultCallApprovalExpiry}
}

// Validate reports settings that cannot work, then fills zero fields from DefaultSettings.
func (s *Settings) Validate() error {
	if s.FastCallBudget > MaxFastCallBudget {
		return fmt.Errorf("fast call budget %v is over its maximum %v", s.FastCallBudget, MaxFastCallBudget)
	}
	if s.MaxOpen < 0 || s.MaxOpenPerCredential < 0 || s.ReapEvery < 0 {
		return errors.New("open response limits and the reap interval cannot be negative")
	}
	if s.CallApprovalExpiry < 0 {
		return fmt.Errorf("call approval expiry %v cannot be negative", s.CallApprovalExpiry)
	}
	*s = s.withDefaults()
	return nil
}

// withDefaults is s with its zero fields taken from DefaultSettings: Validate and NewManager
// both fill them here, so a Manager built without the primary's validation is bounded alike.
func (s Settings) withDefaults() Settings {
	d := DefaultSettings()
	if s.FastCallBudget == 0 {
		s.FastCallBudget = d.FastCallBudget
	}
	if s.MaxOpen == 0 {
		s.MaxOpen = d.MaxOpen
	}
	if s.MaxOpenPerCredential == 0 {
		s.MaxOpenPerCredential = d.MaxOpenPerCredential
	}
	if s.ReapEvery == 0 {
		s.ReapEvery = d.ReapEvery
	}
	if s.CallApprovalExpiry <= 0 {
		s.CallApprovalExpiry = d.CallApprovalExpiry
	}
	return s
}

// EffectiveFastCallBudget is how long a call's answer waits for it to settle, for the
// validated section: a negative budget answers at admission.
func (s Settings) EffectiveFastCallBudget() time.Duration { return max(s.FastCallBudget, 0) }

// BindFlags binds the section to fs, with DefaultSettings (or the environment) as the flags'
// defaults.
func (s *Settings) BindFlags(fs *flag.FlagSet) {
	d := DefaultSettings()
	s.FastCallBudget = d.FastCallBudget
	fs.Var(budgetFlag{&s.FastCallBudget}, "fast-call-budget",
		"how long a tools.call's answer waits for the call to finish (a `duration`), so a fast tool needs one request (0: answer at once; at most 1s)")
	fs.IntVar(&s.MaxOpen, "max-open-responses", d.MaxOpen, "most responses open at once on this primary")
	fs.IntVar(&s.MaxOpenPerCredential, "max-open-responses-per-credential", d.MaxOpenPerCredential, "most responses one runtime credential may hold open")
	fs.DurationVar(&s.ReapEvery, "response-reap-every", d.ReapEvery, "how often responses whose grant expired are closed, and call approvals nobody decided in time expire")
	fs.DurationVar(&s.CallApprovalExpiry, "call-approval-expiry", d.CallApprovalExpiry,
		"how long a call of a function that needs a person's confirmation waits for a decision before it expires and fails")
	fs.BoolVar(&s.WorkersOnly, "workers-only", cliflag.EnvOn("MINDROOM_WORKERS_ONLY"), "refuse responses without a worker key, so no agent command or job runs on this host: for a primary whose shells would share its user and files, as in a container (env MINDROOM_WORKERS_ONLY=1)")
}

// budgetFlag is the fast call budget as a person gives it: 0 answers at once, which the
// section's zero (the default) cannot say, so it is kept negative.
type budgetFlag struct{ budget *time.Duration }

func (f budgetFlag) String() string {
	if f.budget == nil {
		return ""
	}
	return max(*f.budget, 0).String()
}

func (f budgetFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("parse error")
	}
	if d == 0 {
		d = -1
	}
	*f.budget = d
	return nil
}
