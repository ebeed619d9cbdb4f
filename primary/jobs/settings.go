package jobs

import (
	"errors"
	"flag"
	"time"

	"github.com/turncli/turncli/internal/jobproc"
)

// Settings are the background jobs' section of the primary's configuration.
type Settings struct {
	// CommandCeiling, AgentCeiling and Grace bound background jobs: a command's and an agent's
	// longest run, and the time between SIGTERM and SIGKILL (zero: the defaults, as the
	// contract says).
	CommandCeiling time.Duration
	AgentCeiling   time.Duration
	Grace          time.Duration
	// AgentReportGrace is how long after start a worker may take to report a background agent
	// an earlier primary started there before it is recorded interrupted, its cap places freed
	// (zero: the default); it could not reach its tools anyway, since its response died with
	// the earlier primary.
	AgentReportGrace time.Duration
}

// DefaultSettings returns the section's defaults.
func DefaultSettings() Settings {
	return Settings{CommandCeiling: DefaultCommandCeiling, AgentCeiling: DefaultAgentCeiling, Grace: jobproc.DefaultJobGrace, AgentReportGrace: DefaultAgentReportGrace}
}

// Validate reports settings that cannot work, then fills zero fields from DefaultSettings.
func (s *Settings) Validate() error {
	if s.CommandCeiling < 0 || s.AgentCeiling < 0 || s.Grace < 0 || s.AgentReportGrace < 0 {
		return errors.New("job ceilings and grace cannot be negative")
	}
	*s = s.withDefaults()
	return nil
}

// withDefaults is s with its zero fields taken from DefaultSettings: Validate and New both
// fill them here, so a Manager built without the primary's validation bounds its jobs alike.
func (s Settings) withDefaults() Settings {
	d := DefaultSettings()
	setDefault(&s.CommandCeiling, d.CommandCeiling)
	setDefault(&s.AgentCeiling, d.AgentCeiling)
	setDefault(&s.Grace, d.Grace)
	setDefault(&s.AgentReportGrace, d.AgentReportGrace)
	return s
}

// BindFlags binds the section to fs, with DefaultSettings as the flags' defaults.
func (s *Settings) BindFlags(fs *flag.FlagSet) {
	d := DefaultSettings()
	fs.DurationVar(&s.CommandCeiling, "job-ceiling", d.CommandCeiling, "longest a background command may run")
	fs.DurationVar(&s.AgentCeiling, "agent-job-ceiling", d.AgentCeiling, "longest a background agent may run")
	fs.DurationVar(&s.AgentReportGrace, "agent-report-grace", d.AgentReportGrace,
		"how long after start a worker may take to report a background agent before it is recorded interrupted")
}
