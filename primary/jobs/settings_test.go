package jobs

import (
	"testing"
	"time"

	"github.com/turncli/turncli/primary/store/memory"
)

// TestAManagerBuiltDirectlyGetsTheSectionsDefaults: New fills a section's zero fields as the
// section's Validate does, so a Manager built without the primary bounds its jobs alike, and
// a configured field is kept.
func TestAManagerBuiltDirectlyGetsTheSectionsDefaults(t *testing.T) {
	validated := Settings{}
	if err := validated.Validate(); err != nil {
		t.Fatal(err)
	}
	if validated != DefaultSettings() {
		t.Errorf("the validated zero section is %+v, want the defaults %+v", validated, DefaultSettings())
	}
	configured := DefaultSettings()
	configured.AgentCeiling = time.Hour
	for _, tc := range []struct {
		name          string
		section, want Settings
	}{{"Zero", Settings{}, validated}, {"Configured", Settings{AgentCeiling: time.Hour}, configured}} {
		t.Run(tc.name, func(t *testing.T) {
			s := memory.Open(memory.Options{})
			t.Cleanup(func() { s.Close() })
			m, err := New(Config{Settings: tc.section, Store: s, StateDir: t.TempDir(), Sandboxes: unisolated{}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(m.Close)
			if m.cfg.Settings != tc.want {
				t.Errorf("the Manager holds %+v, want %+v", m.cfg.Settings, tc.want)
			}
		})
	}
}
