package jobs

import (
	"errors"
	"log/slog"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/turncli/turncli/internal/sandbox"
	"github.com/turncli/turncli/internal/shellpriv"

	"github.com/turncli/turncli/internal/clock"
)

// Defaults for a Config's zero values. A StartJob without a grace gets
// jobproc.DefaultJobGrace.
const (
	DefaultPoll = 100 * time.Millisecond
	// DefaultStartWait is how long Open waits for a job recorded as starting to name its
	// process (see Config.StartWait).
	DefaultStartWait = 5 * time.Second
)

// Shells builds what a job's process sees; *shellhost.Runner is one.
type Shells interface {
	// Workspace returns (creating it) the agent's working directory.
	Workspace(agent string) (string, error)
	// Environment is the complete environment of a shell with these Agent CLI (and other
	// MINDROOM_AGENT_*) variables, starting in workspace.
	Environment(agentCLI map[string]string, workspace string) []string
	// JobSandbox is the sandbox a job of the agent runs in, keyed by its status file's path;
	// nil where shells are not isolated.
	JobSandbox(agent, workspace, key string) (*sandbox.Job, error)
	// ShellUser is the user jobs run as outside a sandbox; nil: this process's own.
	ShellUser() *shellpriv.User
}

// Config is what a Manager needs.
type Config struct {
	// Dir holds the records, logs and status files: <StateDir>/jobs.
	Dir string
	// Shells gives a job its workspace and environment.
	Shells Shells
	// AgentCLIURL is the worker's sandbox proxy origin, a job's MINDROOM_AGENT_CLI_URL.
	AgentCLIURL string
	// BashPath is bash; empty means looked up in PATH (a job then fails to start without it).
	BashPath string
	// Poll is how often a job is checked for its exit and its log for new output.
	Poll time.Duration
	// StartWait: a job an earlier worker recorded as starting is given this long at Open for
	// its process to write its identity file; one still unnamed then is given up, and its
	// command never runs.
	StartWait time.Duration
	// Clock measures ceilings (clock.System when nil).
	Clock  clock.Clock
	Logger *slog.Logger
}

// Validate checks the configuration and fills defaults.
func (c *Config) Validate() error {
	if !filepath.IsAbs(c.Dir) {
		return errors.New("jobs: Config.Dir must be an absolute path")
	}
	if c.Shells == nil {
		return errors.New("jobs: Config.Shells is required")
	}
	if c.BashPath == "" {
		c.BashPath, _ = exec.LookPath("bash")
	}
	if c.Poll <= 0 {
		c.Poll = DefaultPoll
	}
	if c.StartWait <= 0 {
		c.StartWait = DefaultStartWait
	}
	if c.Clock == nil {
		c.Clock = clock.System
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}
