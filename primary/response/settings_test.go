package response

import (
	"testing"
	"time"
)

func TestFastCallBudgetIsBoundedAndDefaulted(t *testing.T) {
	for _, tc := range []struct {
		configured time.Duration
		valid      bool
		effective  time.Duration
	}{
		{0, true, DefaultFastCallBudget},
		{-1, true, 0},
		{time.Millisecond, true, time.Millisecond},
		{MaxFastCallBudget, true, MaxFastCallBudget},
		{MaxFastCallBudget + time.Nanosecond, false, 0},
	} {
		s := Settings{FastCallBudget: tc.configured}
		if err := s.Validate(); (err == nil) != tc.valid {
			t.Errorf("Validate with budget %v: %v, want valid %v", tc.configured, err, tc.valid)
		}
		if tc.valid {
			if got := s.EffectiveFastCallBudget(); got != tc.effective {
				t.Errorf("budget %v takes effect as %v, want %v", tc.configured, got, tc.effective)
			}
		}
	}
}

// TestTheFlagsZeroBudgetAnswersAtOnce: on the command line 0 means "answer at admission",
// which the section's zero (the default) cannot say.
func TestTheFlagsZeroBudgetAnswersAtOnce(t *testing.T) {
	var budget time.Duration
	f := budgetFlag{&budget}
	if err := f.Set("0"); err != nil || budget >= 0 || f.String() != "0s" {
		t.Fatalf("0 sets %v (%v), shown %q", budget, err, f.String())
	}
	if err := f.Set("20ms"); err != nil || budget != 20*time.Millisecond {
		t.Fatalf("20ms sets %v (%v)", budget, err)
	}
	if err := f.Set("soon"); err == nil || err.Error() != "parse error" {
		t.Fatalf("soon: %v", err)
	}
}
