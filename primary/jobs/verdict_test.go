package jobs

import (
	"testing"

	"github.com/turncli/turncli/internal/jobproc"
)

func TestEveryOutcomeHasItsVerdict(t *testing.T) {
	for _, tc := range []struct {
		name    string
		outcome string
		want    Verdict
	}{
		{"ExitZeroSucceeded", classify(jobproc.Exit{Known: true, Code: 0}), VerdictSucceeded},
		{"ExitOneFailed", classify(jobproc.Exit{Known: true, Code: 1}), VerdictFailed},
		{"ExitTwoFailed", classify(jobproc.Exit{Known: true, Code: 2}), VerdictFailed},
		{"NotExecutableFailed", classify(jobproc.Exit{Known: true, Code: 126}), VerdictFailed},
		{"CommandNotFoundFailed", classify(jobproc.Exit{Known: true, Code: 127}), VerdictFailed},
		{"StoppedBySignalFailed", classify(jobproc.Exit{Known: true, Code: 137}), VerdictFailed},
		{"OtherExitFailed", classify(jobproc.Exit{Known: true, Code: 3}), VerdictFailed},
		{"TimeLimitFailed", classify(jobproc.Exit{TimedOut: true}), VerdictFailed},
		{"OutputLimitFailed", classify(jobproc.Exit{OutputLimit: true}), VerdictFailed},
		{"CancelledIsCancelled", classify(jobproc.Exit{Cancelled: true}), VerdictCancelled},
		{"UnrecordedExitIsUnknown", classify(jobproc.Exit{}), VerdictUnknown},
		{"InterruptedIsUnknown", OutcomeInterrupted, VerdictUnknown},
		{"AStartErrorCouldNotStart", outcomeCouldNotStart + ": the workspace /w does not exist", VerdictNotStarted},
		{"ARestartWhileStartingCouldNotStart", OutcomeNeverStarted, VerdictNotStarted},
		{"ShutdownWhileStartingCouldNotStart", outcomeCouldNotStart + ": the primary is shutting down", VerdictNotStarted},
		{"ATextThatOnlyBeginsLikeItFailed", "could not started", VerdictFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := VerdictOf(tc.outcome); got != tc.want {
				t.Errorf("VerdictOf(%q) = %q, want %q", tc.outcome, got, tc.want)
			}
			if ran := VerdictOf(tc.outcome).Ran(); ran != (tc.want != VerdictNotStarted) {
				t.Errorf("Ran() = %v for %q", ran, tc.outcome)
			}
		})
	}
}
