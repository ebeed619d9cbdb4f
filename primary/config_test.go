package primary

import (
	"testing"
	"time"

	"github.com/turncli/turncli/primary/response"
)

func TestFastCallBudgetIsBoundedAndDefaulted(t *testing.T) {
	for _, tc := range []struct {
		configured time.Duration
		valid      bool
		effective  time.Duration
	}{
		{0, true, response.DefaultFastCallBudget},
		{-1, true, 0},
		{time.Millisecond, true, time.Millisecond},
		{maxFastCallBudget, true, maxFastCallBudget},
		{maxFastCallBudget + time.Nanosecond, false, 0},
	} {
		cfg := Config{StateDir: t.TempDir(), AgentBinary: "/bin/true", FastCallBudget: tc.configured}
		if err := cfg.Validate(); (err == nil) != tc.valid {
			t.Errorf("Validate with budget %v: %v, want valid %v", tc.configured, err, tc.valid)
		}
		if tc.valid {
			if got := fastCallBudget(tc.configured); got != tc.effective {
				t.Errorf("budget %v takes effect as %v, want %v", tc.configured, got, tc.effective)
			}
		}
	}
}
