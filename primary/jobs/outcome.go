package jobs

import (
	"fmt"
	"strings"
	"syscall"
	"time"
)

// Plain-language outcomes that are not computed from an exit status.
const (
	OutcomeSuccess        = "success"
	OutcomeTimeLimit      = "stopped at the time limit"
	OutcomeCancelled      = "cancelled on request"
	OutcomeUnknown        = "outcome unknown after restart"
	OutcomeReattachedDone = "finished (exit status unknown after a restart)"
	outcomeCouldNotStart  = "could not start"
)

// classify names how a job that ran ended. exitCode is 128+N for a process stopped by signal N
// (as bash reports it).
func classify(exitCode int, timedOut, cancelled bool) string {
	switch {
	case timedOut:
		return OutcomeTimeLimit
	case cancelled:
		return OutcomeCancelled
	}
	switch code := exitCode; {
	case code == 0:
		return OutcomeSuccess
	case code == 1:
		return "failed with a general error (exit 1)"
	case code == 2:
		return "rejected its input (exit 2)"
	case code == 126:
		return "not executable (exit 126)"
	case code == 127:
		return "command not found (exit 127)"
	case code > 128 && code <= 128+64:
		sig := syscall.Signal(code - 128)
		return fmt.Sprintf("stopped by signal %d (%s)", int(sig), sig.String())
	default:
		return fmt.Sprintf("failed (exit %d)", code)
	}
}

// continuationText is what the conversation resumes with when a job finished.
func continuationText(j Job) string {
	var b strings.Builder
	name := fmt.Sprintf("job %d", j.ID)
	if j.Label != "" {
		name = fmt.Sprintf("%q (job %d)", j.Label, j.ID)
	}
	fmt.Fprintf(&b, "Background %s finished: %s. Runtime: %s.\n", name, j.Outcome, j.Runtime.Round(time.Millisecond))
	if j.Tail == "" {
		b.WriteString("It produced no output.\n")
	} else {
		fmt.Fprintf(&b, "Last output (up to %d characters):\n%s\n", TailChars, j.Tail)
	}
	b.WriteString("Continue only if this confirms success. Otherwise tell the user plainly what happened; " +
		"do not re-launch the same job.")
	return b.String()
}
