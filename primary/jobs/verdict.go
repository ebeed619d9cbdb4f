package jobs

import "strings"

// Verdict is how a finished job's outcome reads at a glance: people's surfaces label and
// colour a job by it, and show a log only for a job that ran. It is derived here, beside the
// outcome texts, so no surface guesses from the words.
type Verdict string

// The verdicts of a finished job.
const (
	// VerdictSucceeded: it ran and exited 0.
	VerdictSucceeded Verdict = "succeeded"
	// VerdictFailed: it ran and failed (an exit status, a signal, a limit).
	VerdictFailed Verdict = "failed"
	// VerdictNotStarted: its process never started; it has no output.
	VerdictNotStarted Verdict = "could not start"
	// VerdictCancelled: a person stopped it.
	VerdictCancelled Verdict = "cancelled"
	// VerdictUnknown: it ran, but how it ended is not known (a restart lost it).
	VerdictUnknown Verdict = "outcome unknown"
)

// VerdictOf is the verdict of a finished job's outcome, as this package words outcomes
// (a start error's reason follows "could not start: ").
func VerdictOf(outcome string) Verdict {
	switch {
	case outcome == OutcomeSuccess:
		return VerdictSucceeded
	case outcome == outcomeCouldNotStart || strings.HasPrefix(outcome, outcomeCouldNotStart+": "):
		return VerdictNotStarted
	case outcome == OutcomeCancelled:
		return VerdictCancelled
	case outcome == OutcomeUnknown || outcome == OutcomeInterrupted:
		return VerdictUnknown
	default:
		return VerdictFailed
	}
}

// Ran reports whether a job with this verdict had a process, and so may have a log.
func (v Verdict) Ran() bool { return v != VerdictNotStarted }
