package shellhost

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/turncli/turncli/internal/bashexec"
	"github.com/turncli/turncli/internal/shellpriv"
	"github.com/turncli/turncli/internal/telemetry"
)

// Config says how local shells run: the section a person configures (Settings), whole, and
// what only the host that runs the shells can give.
type Config struct {
	// Settings are the shells' section: workspaces, agent binary, environment, bounds, shell
	// user. New fills its zero bounds as the section's Validate does.
	Settings Settings
	// StateDir holds agent_cli_bin/ and, unless Settings.WorkspacesDir names another place,
	// workspaces/.
	StateDir string
	// Sandboxing, built from Settings.Isolation (IsolationConfig.Build), runs shells in
	// sandboxes, each agent as its own user; nil runs them as the shell user
	// (internal/shellpriv), seeing and reaching each other.
	Sandboxing *Isolation
	// AgentCLIURL is the primary's loopback Agent CLI origin, e.g. http://127.0.0.1:7422.
	AgentCLIURL string
	// Getenv reads the primary's environment (os.Getenv by default).
	Getenv func(string) string
}

// Defaults for a Settings' zero bounds.
const (
	DefaultCommandTimeout = 10 * time.Minute
	DefaultMaxTimeout     = time.Hour
)

// DefaultEnvAllow is what a local shell inherits unless configured otherwise.
var DefaultEnvAllow = []string{"HOME", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ", "USER", "LOGNAME", "SHELL", "TMPDIR"}

// basePath is the PATH after agent_cli_bin/ when the allowlist does not carry PATH.
const basePath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Validate checks the configuration.
func (c *Config) Validate() error {
	if !filepath.IsAbs(c.StateDir) {
		return errors.New("localshell: state dir must be an absolute path")
	}
	if c.Settings.WorkspacesDir != "" && !filepath.IsAbs(c.Settings.WorkspacesDir) {
		return errors.New("localshell: the workspaces directory must be an absolute path")
	}
	if c.Sandboxing != nil {
		if c.Sandboxing.Identities == nil {
			return errors.New("localshell: isolation needs the agents' identities")
		}
		if err := c.Sandboxing.Limits.Validate(); err != nil {
			return fmt.Errorf("localshell: %w", err)
		}
	}
	if !filepath.IsAbs(c.Settings.AgentBinary) {
		return errors.New("localshell: agent binary must be an absolute path")
	}
	for _, name := range c.Settings.EnvAllow {
		if strings.HasPrefix(name, "MINDROOM_") || strings.ContainsAny(name, "=\x00") || name == "" {
			return fmt.Errorf("localshell: %q cannot be passed to shells", name)
		}
	}
	if c.Settings.MaxTimeout <= 0 || c.Settings.DefaultTimeout <= 0 || c.Settings.DefaultTimeout > c.Settings.MaxTimeout {
		return errors.New("localshell: timeouts must be positive, default at most max")
	}
	if c.Settings.Grace <= 0 {
		return errors.New("localshell: the grace must be positive")
	}
	return nil
}

// Runner runs shells on this host.
type Runner struct {
	cfg      Config
	launcher *launcher
	boxes    sandboxes
	// probed remembers the agents whose shells passed a probe, and what the probe saw.
	probed probed
}

// New prepares agent_cli_bin/ and workspaces/ under the state dir.
func New(cfg Config) (*Runner, error) {
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	cfg.Settings = cfg.Settings.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// Sandboxes bind paths as the kernel resolves them: no link may stand in one.
	for _, p := range []*string{&cfg.StateDir, &cfg.Settings.WorkspacesDir} {
		if *p == "" {
			continue
		}
		if err := os.MkdirAll(*p, 0o711); err != nil {
			return nil, fmt.Errorf("localshell: %w", err)
		}
		real, err := filepath.EvalSymlinks(*p)
		if err != nil {
			return nil, fmt.Errorf("localshell: %w", err)
		}
		*p = real
	}
	if err := prepareStateDir(cfg.StateDir, cfg.Settings.WorkspacesDir); err != nil {
		return nil, err
	}
	l := &launcher{dir: filepath.Join(cfg.StateDir, "agent_cli_bin"), target: cfg.Settings.AgentBinary, args: cfg.Settings.AgentArgs}
	if err := l.ensure(); err != nil {
		return nil, err
	}
	return &Runner{cfg: cfg, launcher: l}, nil
}

// AgentCLIURL is the origin this host's shells call.
func (r *Runner) AgentCLIURL() string { return r.cfg.AgentCLIURL }

// BinDir is the agent_cli_bin/ directory.
func (r *Runner) BinDir() string { return r.launcher.dir }

// Workspace returns (creating it) the agent's working directory, owned by the agent's user
// (or the shell user, without isolation) and private to it.
func (r *Runner) Workspace(agent string) (string, error) {
	// The callers validate agent names; a name that is not one path element would make
	// another directory (the state directory itself, for "..") an agent's.
	if agent == "" || agent == "." || agent == ".." || strings.ContainsAny(agent, "/\x00") {
		return "", fmt.Errorf("workspace: %q cannot name an agent's workspace", agent)
	}
	u, err := r.userOf(agent)
	if err != nil {
		return "", fmt.Errorf("workspace for %s: %w", agent, err)
	}
	dir := filepath.Join(r.workspacesDir(), agent)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("workspace for %s: %w", agent, err)
	}
	if err := ownWorkspace(dir, u); err != nil {
		return "", fmt.Errorf("workspace for %s: %w", agent, err)
	}
	return dir, nil
}

// Command is one Bash command of a response.
type Command struct {
	// Response is the response the command belongs to: with isolation, its commands share a
	// sandbox until Release. Empty, the command gets a sandbox of its own.
	Response string
	// Agent names the workspace the command starts in.
	Agent   string
	Command string
	// Timeout of zero uses the default; larger than the maximum is capped.
	Timeout time.Duration
	// AgentCLIEnv holds MINDROOM_AGENT_CLI_TOKEN and MINDROOM_AGENT_CLI_WINDOW; the runner adds
	// MINDROOM_AGENT_CLI_URL.
	AgentCLIEnv map[string]string
}

// Run runs one command on this host and blocks until it exits. The span context in ctx, if
// any, is the command's TRACEPARENT and TRACESTATE, so the programs it runs (mindroom-agent
// among them) continue its trace.
func (r *Runner) Run(ctx context.Context, cmd Command, out bashexec.Output) (bashexec.Result, error) {
	if err := r.launcher.ensure(); err != nil {
		return bashexec.Result{}, err
	}
	if err := r.CheckDisk(); err != nil {
		return bashexec.Result{}, err
	}
	dir, err := r.Workspace(cmd.Agent)
	if err != nil {
		return bashexec.Result{}, err
	}
	user, err := r.userOf(cmd.Agent)
	if err != nil {
		return bashexec.Result{}, err
	}
	timeout := cmd.Timeout
	if timeout <= 0 {
		timeout = r.cfg.Settings.DefaultTimeout
	}
	timeout = min(timeout, r.cfg.Settings.MaxTimeout)
	agentCLI := map[string]string{"MINDROOM_AGENT_CLI_URL": r.cfg.AgentCLIURL}
	for k, v := range cmd.AgentCLIEnv {
		agentCLI[k] = v
	}
	for k, v := range telemetry.ShellEnv(ctx) {
		agentCLI[k] = v
	}
	spec := bashexec.Spec{
		Script: cmd.Command, Env: r.Environment(agentCLI, dir), Dir: dir,
		Timeout: timeout, Grace: r.cfg.Settings.Grace, User: user,
	}
	if r.cfg.Sandboxing == nil {
		return bashexec.Run(ctx, spec, out)
	}
	sb, done, err := r.sandboxFor(cmd.Response, cmd.Agent, dir)
	if err != nil {
		return bashexec.Result{}, err
	}
	defer done()
	spec.Sandbox, spec.OpenFiles = sb.Join, sb.Limits().OpenFiles
	before := sb.Events()
	res, err := bashexec.Run(ctx, spec, out)
	if note := sb.Events().Since(before).Explain(sb.Limits()); note != "" && err == nil {
		out(bashexec.Stderr, []byte(note))
	}
	return res, err
}

// Environment is the complete environment of a local shell.
func (r *Runner) Environment(agentCLI map[string]string, workspace string) []string {
	vars := make(map[string]string)
	for _, name := range r.cfg.Settings.EnvAllow {
		if v := r.cfg.Getenv(name); v != "" {
			vars[name] = v
		}
	}
	path := basePath
	if v := r.cfg.Getenv("PATH"); v != "" && allowed(r.cfg.Settings.EnvAllow, "PATH") {
		path = v
	}
	vars["PATH"] = r.launcher.dir + string(os.PathListSeparator) + path
	vars["PWD"] = workspace
	u := r.cfg.Settings.User
	if r.cfg.Sandboxing != nil {
		u = &shellpriv.User{} // an agent's own user has no name
	}
	asShellUser(vars, u, workspace)
	for k, v := range agentCLI {
		vars[k] = v
	}
	env := make([]string, 0, len(vars))
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env
}

// asShellUser makes the identity variables a shell inherited true of the user it runs as, when
// that is not the primary's: the primary's HOME is not the shell's to read or write (its own
// workspace is), nor are USER and LOGNAME its name.
func asShellUser(vars map[string]string, u *shellpriv.User, workspace string) {
	if u == nil {
		return
	}
	if _, ok := vars["HOME"]; ok {
		vars["HOME"] = workspace
	}
	for _, name := range []string{"USER", "LOGNAME"} {
		if _, ok := vars[name]; !ok {
			continue
		}
		if u.Name == "" {
			delete(vars, name)
		} else {
			vars[name] = u.Name
		}
	}
}

func allowed(list []string, name string) bool {
	for _, n := range list {
		if n == name {
			return true
		}
	}
	return false
}
