package shellhost

import (
	"testing"
	"time"
)

// TestARunnerBuiltDirectlyGetsTheSectionsDefaults: New fills a section's zero bounds as the
// section's Validate does, so a Runner built without the primary bounds commands alike, and a
// nil allowlist still passes no variable.
func TestARunnerBuiltDirectlyGetsTheSectionsDefaults(t *testing.T) {
	r, err := New(Config{Settings: Settings{AgentBinary: "/bin/true"}, StateDir: t.TempDir(), AgentCLIURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	d := DefaultSettings()
	got := r.cfg.Settings
	for _, b := range []struct {
		name      string
		got, want time.Duration
	}{{"DefaultTimeout", got.DefaultTimeout, d.DefaultTimeout}, {"MaxTimeout", got.MaxTimeout, d.MaxTimeout}, {"Grace", got.Grace, d.Grace}} {
		if b.got != b.want || b.want == 0 {
			t.Errorf("%s = %v, want the section's default %v", b.name, b.got, b.want)
		}
	}
	if got.EnvAllow != nil {
		t.Errorf("EnvAllow = %q, want nil (no variable)", got.EnvAllow)
	}
}

// TestValidateFillsTheSameDefaults: the section's Validate and New share one filling.
func TestValidateFillsTheSameDefaults(t *testing.T) {
	s := Settings{AgentBinary: "/bin/true", MaxTimeout: 2 * time.Hour}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	d := DefaultSettings()
	if s.DefaultTimeout != d.DefaultTimeout || s.Grace != d.Grace || s.MaxTimeout != 2*time.Hour {
		t.Errorf("validated bounds %v, %v, %v; want %v, %v and the configured 2h0m0s", s.DefaultTimeout, s.Grace, s.MaxTimeout, d.DefaultTimeout, d.Grace)
	}
	neg := Settings{AgentBinary: "/bin/true", Grace: -time.Second}
	if err := neg.Validate(); err == nil || err.Error() != "shell timeouts and grace cannot be negative" {
		t.Errorf("negative grace: %v, want the refusal", err)
	}
}
