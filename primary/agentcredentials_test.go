package primary_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/turncli/turncli/internal/logtest"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
)

// TestAgentEngineCredentialsAreLiveSecrets: an engine's tools see its credentials and may put
// them in an approval or a prompt, so they are live secrets, masked wherever the primary shows
// text (its logs too: their handler masks the same set); the engine's other settings (a base
// URL) stay readable.
func TestAgentEngineCredentialsAreLiveSecrets(t *testing.T) {
	const key, url = "sk-ant-engine-key-0123456789", "http://127.0.0.1:9/v1"
	var logs logtest.Buffer
	env := testenv.Start(t, testenv.WithConfig(func(c *primary.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
		c.Interaction.AgentEnv = []string{"ANTHROPIC_API_KEY=" + key, "ANTHROPIC_BASE_URL=" + url}
	}))
	text := "details: key " + key + " at " + url
	if got, want := env.Primary.Internals().Secrets.Redact(text), "details: key (redacted) at "+url; got != want {
		t.Errorf("redacted = %q, want %q", got, want)
	}
	if out := logs.String(); strings.Contains(out, key) {
		t.Errorf("the log shows the key:\n%s", out)
	}
}
