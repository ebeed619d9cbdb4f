package claude

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/turncli/turncli/client/engines"
)

// Engine is the engine's name in the result line and in `mindroom-agent engine NAME`;
// HookCommand is the name the hook runs under.
const (
	Engine      = "claude"
	HookCommand = "claude-hook"
)

// mcpServerName is the name of turncli's MCP server in the CLI's configuration, so its tools
// are mcp__mindroom__<tool>.
const mcpServerName = "mindroom"

// DefaultHookWait keeps a decision that comes quickly within the run, and a wait that is
// long out of it.
const DefaultHookWait = 50 * time.Second

// hookTimeoutMargin is how much longer the CLI lets the hook run than the hook waits, so it
// never kills a hook that is about to answer (a killed hook decides nothing, and the tool use
// is denied).
const hookTimeoutMargin = 60 * time.Second

// configDirName is the CLI's configuration directory under the job's engine home.
const configDirName = "claude"

// invocation is how Run starts the CLI.
type invocation struct {
	args []string
	env  []string
}

// runSettings is what the job's environment says about the run.
type runSettings struct {
	task, resume, home string
	maxTurns           int
	maxBudgetUSD       string
	hookWait           time.Duration
}

// readSettings reads and checks the job's environment.
func readSettings(getenv func(string) string) (runSettings, error) {
	s := runSettings{task: getenv(engines.TaskEnv), resume: getenv(engines.ResumeEnv), home: getenv(engines.HomeEnv)}
	if s.home != "" && !filepath.IsAbs(s.home) {
		return s, fmt.Errorf("%s must be an absolute directory, got %q", engines.HomeEnv, s.home)
	}
	if s.resume == "" && strings.TrimSpace(s.task) == "" {
		return s, fmt.Errorf("%s is empty: there is no brief to run", engines.TaskEnv)
	}
	if v := getenv(engines.MaxTurnsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return s, fmt.Errorf("%s must be a whole number of turns of at least 1, got %q", engines.MaxTurnsEnv, v)
		}
		s.maxTurns = n
	}
	if v := getenv(engines.MaxBudgetEnv); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f > 0) || f > 1e9 {
			return s, fmt.Errorf("%s must be a positive amount of US dollars, got %q", engines.MaxBudgetEnv, v)
		}
		s.maxBudgetUSD = strconv.FormatFloat(f, 'f', -1, 64)
	}
	wait, err := hookWait(getenv)
	if err != nil {
		return s, err
	}
	s.hookWait = wait
	return s, nil
}

// hookWait reads engines.HookWaitEnv: DefaultHookWait when unset.
func hookWait(getenv func(string) string) (time.Duration, error) {
	v := getenv(engines.HookWaitEnv)
	if v == "" {
		return DefaultHookWait, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s must be a positive Go duration such as 50s, got %q", engines.HookWaitEnv, v)
	}
	return d, nil
}

// newInvocation builds the CLI's command line and environment. self is the driver's own
// executable, which serves the MCP server and the hook, so PATH does not decide which
// mindroom-agent they are; base is the job's environment.
//
// The permission mode is manual, the CLI's own default: tools that only read are allowed,
// and every other tool use needs a permission. The hook gives that permission (or refuses
// it, or defers the tool use) before the mode is asked, and --permission-prompts none turns
// whatever would still prompt (the hook failed or timed out) into a denial: a headless run
// has nobody to ask. No mode that approves on its own (acceptEdits, auto, dontAsk,
// bypassPermissions) is used: the people of the conversation decide, not the CLI.
func newInvocation(s runSettings, self string, base []string) (invocation, error) {
	settings, err := json.Marshal(map[string]any{
		"hooks": map[string]any{"PreToolUse": []any{map[string]any{
			"matcher": "*",
			"hooks": []any{map[string]any{
				"type":    "command",
				"command": shellQuote(self) + " engine " + HookCommand,
				"timeout": int((s.hookWait + hookTimeoutMargin).Seconds()),
			}},
		}}},
	})
	if err != nil {
		return invocation{}, err
	}
	mcpConfig, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		mcpServerName: map[string]any{"command": self, "args": []string{"mcp"}},
	}})
	if err != nil {
		return invocation{}, err
	}
	args := []string{"-p"}
	if s.resume != "" {
		// A deferred tool use is taken up by resuming without a prompt: the CLI runs the
		// pending tool use (asking the hook again) and lets the model go on. A prompt would
		// be a new turn after that one.
		args = append(args, "--resume", s.resume)
	}
	args = append(args,
		"--output-format", "stream-json", "--verbose",
		// No settings file of the host's user, the repository or its local overrides is
		// read: their hooks, permissions and environment would change what the agent may do.
		"--setting-sources", "",
		"--settings", string(settings),
		"--mcp-config", string(mcpConfig), "--strict-mcp-config",
		"--permission-mode", "manual", "--permission-prompts", "none",
	)
	if s.maxTurns > 0 {
		args = append(args, "--max-turns", strconv.Itoa(s.maxTurns))
	}
	if s.maxBudgetUSD != "" {
		args = append(args, "--max-budget-usd", s.maxBudgetUSD)
	}
	if s.resume == "" {
		args = append(args, "--", s.task) // a brief that starts with a dash is no option
	}
	return invocation{args: args, env: engineEnv(base, filepath.Join(s.home, configDirName))}, nil
}

// engineEnv is the CLI's environment: the job's, which the primary built for it (the Agent
// CLI's grant and window that the MCP server and the hook use, the model's credentials,
// PATH), with the CLI's configuration in the job's own directory and nothing sent anywhere
// but to the model.
func engineEnv(base []string, configDir string) []string {
	set := []string{
		"CLAUDE_CONFIG_DIR=" + configDir,
		// No update checks, telemetry, error reports or other traffic beside the model's.
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
	}
	ours := make(map[string]bool, len(set))
	for _, kv := range set {
		name, _, _ := strings.Cut(kv, "=")
		ours[name] = true
	}
	env := make([]string, 0, len(base)+len(set))
	for _, kv := range base {
		if name, _, _ := strings.Cut(kv, "="); !ours[name] {
			env = append(env, kv)
		}
	}
	return append(env, set...)
}

// prepareHome makes the CLI's configuration directory, private to the job's user, and
// removes what an earlier run of the job parked.
func prepareHome(home string) (configDir string, err error) {
	configDir = filepath.Join(home, configDirName)
	if err := os.MkdirAll(configDir, 0o700); err != nil {
		return "", err
	}
	if err := os.Chmod(configDir, 0o700); err != nil {
		return "", err
	}
	if err := os.Remove(parkedPath(home)); err != nil && !os.IsNotExist(err) {
		return "", err
	}
	return configDir, nil
}

// shellQuote quotes s as one word of a POSIX shell: the CLI runs a hook's command through
// one.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
