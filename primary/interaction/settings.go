package interaction

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/turncli/turncli/internal/secretmask"
)

// Settings are the interaction tools' section of the primary's configuration.
type Settings struct {
	// PromptWait bounds how long request_approval and permission_prompt wait for a person
	// (zero: DefaultPromptWait, as the contract says).
	PromptWait time.Duration
	// AgentEngine runs background agents: a built-in engine name (see EngineNames) or
	// "command:<bash command>"; empty refuses background agents.
	AgentEngine string
	// AgentEnv is what the engine of a background agent gets besides the shells' environment:
	// NAME takes the variable from the primary's own environment, NAME=VALUE sets it. Every
	// value is redacted from the job's output like a secret. It is how an engine finds its
	// model and credentials (ANTHROPIC_API_KEY, OPENAI_API_KEY, a base URL, ...).
	AgentEnv []string
	// AgentMaxTurns and AgentMaxBudgetUSD cap each run of a driver engine (zero: the engine's
	// own limits only).
	AgentMaxTurns     int
	AgentMaxBudgetUSD float64
}

// DefaultSettings returns the section's defaults.
func DefaultSettings() Settings { return Settings{PromptWait: DefaultPromptWait} }

// Validate reports settings that cannot work, then fills zero fields from DefaultSettings.
func (s *Settings) Validate() error {
	if s.PromptWait < 0 {
		return errors.New("the prompt wait cannot be negative")
	}
	if _, err := s.Engine(); err != nil {
		return fmt.Errorf("agent engine: %w", err)
	}
	if s.AgentMaxTurns < 0 || s.AgentMaxBudgetUSD < 0 {
		return errors.New("an agent's turn and spending caps cannot be negative")
	}
	for _, kv := range s.AgentEnv {
		name, _, set := strings.Cut(kv, "=")
		if !validEnvName(name) {
			return fmt.Errorf("agent engine environment: %q is not NAME or NAME=VALUE with a variable name of letters, digits and _", kv)
		}
		if !set && strings.HasPrefix(name, "MINDROOM_") {
			return fmt.Errorf("agent engine environment: %s cannot be taken from the primary's environment: MINDROOM_ variables hold the primary's own settings and credentials", name)
		}
	}
	*s = s.withDefaults()
	return nil
}

// withDefaults is s with its zero fields taken from DefaultSettings: Validate and New both
// fill them here, so a Service built without the primary's validation waits alike.
func (s Settings) withDefaults() Settings {
	if s.PromptWait == 0 {
		s.PromptWait = DefaultSettings().PromptWait
	}
	return s
}

// Engine is the engine AgentEngine names; the zero Engine (none) when it is empty.
func (s Settings) Engine() (Engine, error) {
	if s.AgentEngine == "" {
		return Engine{}, nil
	}
	return ParseEngine(s.AgentEngine)
}

// BindFlags binds the section to fs, with DefaultSettings (or the environment) as the flags'
// defaults.
func (s *Settings) BindFlags(fs *flag.FlagSet) {
	d := DefaultSettings()
	fs.DurationVar(&s.PromptWait, "prompt-wait", d.PromptWait, "longest request_approval and permission_prompt wait for a person")
	fs.Func("agent-engine-env", "a variable for background agents' engines: NAME (taken from this process's environment) or NAME=VALUE; repeatable, values are redacted from job output (env MINDROOM_AGENT_ENGINE_ENV, comma-separated)",
		func(v string) error { s.AgentEnv = append(s.AgentEnv, v); return nil })
	if v := os.Getenv("MINDROOM_AGENT_ENGINE_ENV"); v != "" {
		s.AgentEnv = strings.Split(v, ",")
	}
	fs.IntVar(&s.AgentMaxTurns, "agent-max-turns", d.AgentMaxTurns, "most model turns of each run of a claude or codex background agent (0: the engine's own limit)")
	fs.Float64Var(&s.AgentMaxBudgetUSD, "agent-max-budget-usd", d.AgentMaxBudgetUSD, "most US dollars each run of a claude background agent may spend (0: no cap)")
	fs.StringVar(&s.AgentEngine, "agent-engine", os.Getenv("MINDROOM_AGENT_ENGINE"), "engine of background agents: claude (Claude Code), codex (Codex), test, or command:<bash command> reading $MINDROOM_AGENT_TASK; empty refuses them (env MINDROOM_AGENT_ENGINE)")
}

// validEnvName reports whether name can be an environment variable of a shell: a letter or _
// first, then letters, digits and _.
func validEnvName(name string) bool {
	for i, r := range name {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return name != ""
}

// agentEnv is AgentEnv's variables with their values, read from getenv for a bare NAME (a
// variable the primary does not have is left out).
// AgentEnvValues are the values of AgentEnv as an engine gets them: the jobs manager redacts
// them from every job's output (jobs.Config.OutputSecrets).
func (s Settings) AgentEnvValues() []string {
	return slices.Collect(maps.Values(s.agentEnv(os.Getenv)))
}

// AgentCredentials are the values of AgentEnv whose names mark credentials (secretmask.Key:
// ANTHROPIC_API_KEY, OPENAI_API_KEY, ...): live secrets of the primary, redacted wherever it
// shows text, since an engine's tools see them and may put them in what people read.
func (s Settings) AgentCredentials() []string {
	var out []string
	for k, v := range s.agentEnv(os.Getenv) {
		if secretmask.Key(k) {
			out = append(out, v)
		}
	}
	return out
}

func (s Settings) agentEnv(getenv func(string) string) map[string]string {
	out := map[string]string{}
	for _, kv := range s.AgentEnv {
		name, value, set := strings.Cut(kv, "=")
		if !set {
			if value = getenv(name); value == "" {
				continue
			}
		}
		out[name] = value
	}
	return out
}
