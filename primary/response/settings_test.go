package response

import (
	"testing"
	"time"

	"github.com/turncli/turncli/primary/catalog"
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

// TestAManagerBuiltDirectlyGetsTheSectionsDefaults: NewManager fills a section's zero fields as
// the section's Validate does, so a Manager built without the primary is bounded alike, and a
// configured field (a negative budget: answer at admission) is kept.
func TestAManagerBuiltDirectlyGetsTheSectionsDefaults(t *testing.T) {
	validated := Settings{}
	if err := validated.Validate(); err != nil {
		t.Fatal(err)
	}
	if validated != DefaultSettings() {
		t.Errorf("the validated zero section is %+v, want the defaults %+v", validated, DefaultSettings())
	}
	if got := NewManager(Config{Registry: catalog.NewRegistry()}).cfg.Settings; got != validated {
		t.Errorf("a Manager built directly holds %+v, want %+v", got, validated)
	}
	configured := Settings{FastCallBudget: -1, MaxOpen: 7, WorkersOnly: true}
	want := DefaultSettings()
	want.FastCallBudget, want.MaxOpen, want.WorkersOnly = -1, 7, true
	if got := NewManager(Config{Settings: configured, Registry: catalog.NewRegistry()}).cfg.Settings; got != want {
		t.Errorf("a Manager built with %+v holds %+v, want %+v", configured, got, want)
	}
}

func TestCallApprovalExpiryIsDefaultedAndNeverNegative(t *testing.T) {
	s := Settings{}
	if err := s.Validate(); err != nil || s.CallApprovalExpiry != DefaultCallApprovalExpiry {
		t.Fatalf("zero expiry validates to %v (%v), want %v", s.CallApprovalExpiry, err, DefaultCallApprovalExpiry)
	}
	s = Settings{CallApprovalExpiry: time.Nanosecond}
	if err := s.Validate(); err != nil || s.CallApprovalExpiry != time.Nanosecond {
		t.Fatalf("1ns expiry validates to %v (%v)", s.CallApprovalExpiry, err)
	}
	s = Settings{CallApprovalExpiry: -time.Nanosecond}
	if err := s.Validate(); err == nil {
		t.Fatal("a negative expiry was accepted")
	}
}
