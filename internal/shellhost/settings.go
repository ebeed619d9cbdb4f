package shellhost

import (
	"errors"
	"flag"
	"os"
	"slices"
	"time"

	"github.com/turncli/turncli/internal/bashexec"
	"github.com/turncli/turncli/internal/cliflag"
	"github.com/turncli/turncli/internal/shellpriv"
)

// Settings are the shells' section of a primary's configuration (its local shells) and of a
// worker's: what a person chooses of Config, the rest (the state directory, the Agent CLI's
// address, the built isolation) coming from the process.
type Settings struct {
	// WorkspacesDir holds the agents' workspaces; empty means <StateDir>/workspaces.
	WorkspacesDir string
	// AgentBinary and AgentArgs are what agent_cli_bin/mindroom-agent runs (required).
	AgentBinary string
	AgentArgs   []string
	// Isolation says how local shells and jobs are kept apart (sandboxes, agents' own users,
	// limits); its zero value isolates wherever the host can.
	Isolation IsolationConfig
	// EnvAllow names the variables local shells inherit from the primary; nil: none (the
	// flag's default is DefaultEnvAllow).
	EnvAllow []string
	// DefaultTimeout, MaxTimeout and Grace bound local commands (zero: the defaults).
	DefaultTimeout time.Duration
	MaxTimeout     time.Duration
	Grace          time.Duration
	// User is the user local shells and jobs run as without isolation; nil: this process's
	// own. The flag's default is shellpriv.Default (nobody:nogroup when root).
	User *shellpriv.User
	// userErr is a bad MINDROOM_SHELL_USER, reported by Validate.
	userErr error
}

// DefaultSettings returns the section's defaults.
func DefaultSettings() Settings {
	return Settings{
		EnvAllow:       slices.Clone(DefaultEnvAllow),
		DefaultTimeout: DefaultCommandTimeout, MaxTimeout: DefaultMaxTimeout, Grace: bashexec.DefaultGrace,
	}
}

// Validate reports settings that cannot work, then fills zero bounds from DefaultSettings.
func (s *Settings) Validate() error {
	if s.AgentBinary == "" {
		return errors.New("agent binary is required")
	}
	if s.userErr != nil {
		return s.userErr
	}
	var err error
	if s.User, err = shellpriv.Usable(s.User); err != nil {
		return err
	}
	if s.DefaultTimeout < 0 || s.MaxTimeout < 0 || s.Grace < 0 {
		return errors.New("shell timeouts and grace cannot be negative")
	}
	*s = s.withDefaults()
	return nil
}

// withDefaults is s with its zero bounds taken from DefaultSettings: Validate and New both
// fill them here, so a Runner built without the primary's validation bounds its commands
// alike. A nil EnvAllow stays nil: it means no variable, not the default list.
func (s Settings) withDefaults() Settings {
	d := DefaultSettings()
	for _, f := range []struct{ v, def *time.Duration }{{&s.DefaultTimeout, &d.DefaultTimeout}, {&s.MaxTimeout, &d.MaxTimeout}, {&s.Grace, &d.Grace}} {
		if *f.v == 0 {
			*f.v = *f.def
		}
	}
	return s
}

// BindFlags binds the section to fs, with DefaultSettings (or the environment) as the flags'
// defaults.
func (s *Settings) BindFlags(fs *flag.FlagSet) {
	d := DefaultSettings()
	fs.StringVar(&s.AgentBinary, "agent-binary", os.Getenv("MINDROOM_AGENT_BINARY"), "mindroom-agent executable for agent_cli_bin/ (default: the one next to this binary; the primary falls back to its own agent subcommand)")
	fs.StringVar(&s.WorkspacesDir, "workspaces-dir", os.Getenv("MINDROOM_WORKSPACES_DIR"), "directory of the agents' workspaces, on a file system of their own if a full workspace must not fill the state directory's (default <state-dir>/workspaces; env MINDROOM_WORKSPACES_DIR)")
	s.EnvAllow = d.EnvAllow
	if v := os.Getenv("MINDROOM_SHELL_ENV_ALLOW"); v != "" {
		s.EnvAllow = cliflag.SplitList(v)
	}
	fs.Var(cliflag.List{Names: &s.EnvAllow}, "shell-env-allow", "comma-separated `names` of the variables shells inherit from this process")
	fs.DurationVar(&s.DefaultTimeout, "shell-timeout", d.DefaultTimeout, "default timeout of a Bash command")
	fs.DurationVar(&s.MaxTimeout, "shell-max-timeout", d.MaxTimeout, "longest timeout a Bash command may ask for")
	s.User = shellpriv.Default()
	if v := os.Getenv("MINDROOM_SHELL_USER"); v != "" {
		s.User, s.userErr = shellpriv.Parse(v)
	}
	fs.Func("shell-user", "`NAME`, UID, NAME:GROUP or UID:GID shells and jobs run as when this process runs as root without isolation (with it, each agent has its own user); default nobody:nogroup (env MINDROOM_SHELL_USER)",
		func(spec string) (err error) {
			s.User, err = shellpriv.Parse(spec)
			s.userErr = nil
			return err
		})
	BindIsolationFlags(fs, &s.Isolation)
}
