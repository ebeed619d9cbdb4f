package interaction

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"
)

// Settings are the interaction tools' section of the primary's configuration.
type Settings struct {
	// PromptWait bounds how long request_approval and permission_prompt wait for a person
	// (zero: DefaultPromptWait, as the contract says).
	PromptWait time.Duration
	// AgentEngine runs background agents: a built-in engine name (see EngineNames) or
	// "command:<bash command>"; empty refuses background agents.
	AgentEngine string
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
	fs.StringVar(&s.AgentEngine, "agent-engine", os.Getenv("MINDROOM_AGENT_ENGINE"), "engine of background agents: claude, codex, test, or command:<bash command> reading $MINDROOM_AGENT_TASK; empty refuses them (env MINDROOM_AGENT_ENGINE)")
}
