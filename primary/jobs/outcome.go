package jobs

import (
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/turncli/turncli/internal/jobproc"
)

// Plain-language outcomes that are not computed from an exit status.
const (
	OutcomeSuccess       = "success"
	OutcomeTimeLimit     = "stopped at the time limit"
	OutcomeCancelled     = "cancelled on request"
	OutcomeUnknown       = "outcome unknown after restart"
	OutcomeInterrupted   = "interrupted by a restart of the primary; not replayed"
	OutcomeOutputLimit   = "stopped because its output passed the log size limit"
	outcomeCouldNotStart = "could not start"
	// outcomeExitTwo: exit 2 is the shell's misuse of a builtin and many programs' usage
	// error, but make, grep, diff and others use it for failures of their own, so it names
	// the convention without claiming the input was at fault.
	outcomeExitTwo = "failed, often a usage error or rejected input (exit 2)"
	// OutcomeNeverStarted: the primary died while launching the job, before its process
	// started; it was given up at the next boot, so its command never runs.
	OutcomeNeverStarted = outcomeCouldNotStart + ": the primary restarted while starting it; it never ran and is not retried"
)

// classify names how a job that ran ended. A status of 128+N is a process stopped by signal N
// (as bash reports it).
func classify(e jobproc.Exit) string {
	switch {
	case e.TimedOut:
		return OutcomeTimeLimit
	case e.Cancelled:
		return OutcomeCancelled
	case e.OutputLimit:
		return OutcomeOutputLimit
	case !e.Known:
		return OutcomeUnknown
	}
	switch code := e.Code; {
	case code == 0:
		return OutcomeSuccess
	case code == 1:
		return "failed with a general error (exit 1)"
	case code == 2:
		return outcomeExitTwo
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

// jobName is how texts name a job.
func jobName(j Job) string {
	if j.Label != "" {
		return fmt.Sprintf("%q (job %d)", j.Label, j.ID)
	}
	return fmt.Sprintf("job %d", j.ID)
}

// continuationText is what the conversation resumes with when a job finished. report is the
// redacted full output of a successful agent job, delivered as the agent's report.
func continuationText(j Job, report string) string {
	var b strings.Builder
	if j.Kind == "agent" {
		if j.Outcome == OutcomeSuccess {
			fmt.Fprintf(&b, "Background agent %s finished. Its report:\n\n%s", jobName(j), report)
			return b.String()
		}
		fmt.Fprintf(&b, "Background agent %s did not finish: %s. Runtime: %s.\n", jobName(j), j.Outcome, j.Runtime.Round(time.Millisecond))
		writeTail(&b, j.Tail)
		b.WriteString("Tell the user plainly what happened, using only what this output shows; do not re-launch the same agent.")
		return b.String()
	}
	fmt.Fprintf(&b, "Background %s finished: %s. Runtime: %s.\n", jobName(j), j.Outcome, j.Runtime.Round(time.Millisecond))
	writeTail(&b, j.Tail)
	b.WriteString("Continue only if this confirms success. Otherwise tell the user plainly what happened; " +
		"do not re-launch the same job.")
	return b.String()
}

func writeTail(b *strings.Builder, tail string) {
	if tail == "" {
		b.WriteString("It produced no output.\n")
		return
	}
	fmt.Fprintf(b, "Last output (up to %d characters):\n%s\n", jobproc.TailChars, tail)
}
