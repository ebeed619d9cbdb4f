package jobs

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/turncli/turncli/client/engines"
	"github.com/turncli/turncli/internal/jobproc"
	"github.com/turncli/turncli/primary/store"
)

// An agent job whose JobSpec names an Engine runs an engine driver (`mindroom-agent engine
// NAME`), which ends its output with a result line (client/engines). The job's outcome, its
// report and its engine run come from that line, not from the output as a whole: the output
// before it is the engine's progress, for the log.

// maxResultRead bounds how much of a log's end is read to find the result line: a report
// past MaxReportBytes is cut anyway, and the line carries little else.
const maxResultRead = 4 * MaxReportBytes

// Bounds of what a driver's result may put in the job's record.
const (
	maxRunErrors    = 5
	maxRunErrorText = 500
	maxRunWord      = 200
)

// Outcomes of an engine's run that its exit status does not tell.
const (
	OutcomeNoResult    = "failed: the engine ended without saying how its run went (see the job's log)"
	outcomeEngineError = "failed: the engine reported an error"
	outcomeTurnLimit   = "stopped at its limit of turns"
	outcomeBudgetLimit = "stopped at its spending limit"
	outcomeNotParked   = "failed: it stopped to wait for people, but could not be parked"
)

// engineResult reads the result line at the end of a job's log, written past offset start
// (where the log ended when this run of the job began: an earlier run's line is not this
// run's).
func engineResult(path string, start int64) (engines.Result, bool) {
	f, err := os.Open(path)
	if err != nil {
		return engines.Result{}, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return engines.Result{}, false
	}
	from := max(fi.Size()-maxResultRead, start, 0)
	buf, err := io.ReadAll(io.NewSectionReader(f, from, fi.Size()-from))
	if err != nil {
		return engines.Result{}, false
	}
	return engines.ParseResult(buf)
}

// engineEnd is the result of an engine job that ended as exit says, given its driver's result
// (ok false: there is none), and the report to deliver when it succeeded. The exit wins when it
// is not a success: a job cancelled or stopped at its ceiling says so, whatever its driver
// wrote on the way out.
func engineEnd(exit store.JobResult, prev *store.EngineRun, r engines.Result, ok bool) (store.JobResult, string) {
	res := exit
	if ok {
		res.Run = engineRun(prev, r)
	}
	if exit.Outcome != OutcomeSuccess && !(ok && endedByItself(exit)) {
		return res, ""
	}
	switch {
	case !ok:
		res.Outcome = OutcomeNoResult
	case r.Status == engines.StatusFinished && !r.IsError:
		return res, r.Report
	case r.StopReason == "error_max_turns":
		res.Outcome = outcomeTurnLimit
	case r.StopReason == "error_max_budget_usd":
		res.Outcome = outcomeBudgetLimit
	case r.Status == engines.StatusParked:
		res.Outcome = outcomeNotParked
	default:
		res.Outcome = outcomeEngineError
		if len(r.Errors) > 0 {
			res.Outcome += ": " + cut(r.Errors[0], maxRunErrorText)
		} else if r.StopReason != "" {
			res.Outcome += " (" + cut(r.StopReason, maxRunWord) + ")"
		}
	}
	return res, ""
}

// endedByItself reports whether a job's process ended on its own with a known exit code, so
// that its driver's result says how it went: not stopped at its ceiling, cancelled, cut off
// at its output limit or lost to a restart.
func endedByItself(exit store.JobResult) bool {
	switch exit.Outcome {
	case OutcomeTimeLimit, OutcomeCancelled, OutcomeOutputLimit, OutcomeUnknown, OutcomeInterrupted:
		return false
	}
	return exit.ExitCode != nil && *exit.ExitCode < 128
}

// engineRun is the job's engine run once r is added to what earlier runs of the same job
// (before it was parked) recorded.
func engineRun(prev *store.EngineRun, r engines.Result) *store.EngineRun {
	run := &store.EngineRun{
		Session: cut(r.Session, maxRunWord), Turns: max(r.Turns, 0), CostUSD: max(r.CostUSD, 0),
		InputTokens: max(r.InputTokens, 0), OutputTokens: max(r.OutputTokens, 0),
		StopReason: cut(r.StopReason, maxRunWord), IsError: r.IsError, Runs: 1,
	}
	for _, e := range r.Errors[:min(len(r.Errors), maxRunErrors)] {
		run.Errors = append(run.Errors, cut(e, maxRunErrorText))
	}
	if prev != nil {
		run.Turns += prev.Turns
		run.CostUSD += prev.CostUSD
		run.InputTokens += prev.InputTokens
		run.OutputTokens += prev.OutputTokens
		run.Runs += prev.Runs
	}
	return run
}

// cut is s, valid UTF-8, at most n bytes.
func cut(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Parker parks an agent job whose engine stopped on a tool use that waits for people: see
// JobSpec.Park.
type Parker func(ctx context.Context, job store.Job, r engines.Result) error

// park parks rec with its tracked Park, and runs its OnEnd: the process has ended, and the
// job goes on only once people decided. false when it could not be parked.
func (m *Manager) park(ctx context.Context, rec store.Job, r engines.Result, t *tracked) bool {
	if t == nil || t.park == nil || r.Parked == nil {
		return false
	}
	rec.Run = engineRun(rec.Run, r)
	if err := t.park(ctx, rec, r); err != nil {
		m.log.Warn("agent job could not be parked", "job", rec.ID, "err", err)
		return false
	}
	m.log.Info("agent job parked", "job", rec.ID, "tool", r.Parked.Tool)
	// From here a cancel finds the job parked in the store; one asked for while it parked
	// was made before this (under m.mu, see cancelTracked) and ends it now.
	m.forget(t)
	m.publish("job.parked", rec)
	if t.cancelRequested() {
		if err := m.finishParked(ctx, rec, store.JobResult{Outcome: OutcomeCancelled}); err != nil {
			m.log.Error("job cancelled while it parked not finished", "job", rec.ID, "err", err)
		}
	}
	if t.onEnd != nil {
		t.onEnd()
	}
	return true
}

// reportOf is what an engine job's report says: its final message, redacted like any output,
// cut at MaxReportBytes.
func (m *Manager) reportOf(text string, t *tracked) string {
	s := m.redact(strings.ToValidUTF8(text, "\uFFFD"), t)
	if len(s) > MaxReportBytes {
		s = cut(s, MaxReportBytes) + fmt.Sprintf("\n[The report was cut at %d bytes; the whole output is in the job's log.]", MaxReportBytes)
	}
	return strings.TrimSpace(s)
}

// engineTail is the tail of an engine job's progress: the log without its result line.
func (m *Manager) engineTail(path string, t *tracked) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	from := max(fi.Size()-maxResultRead, 0)
	buf, err := io.ReadAll(io.NewSectionReader(f, from, fi.Size()-from))
	if err != nil {
		return ""
	}
	raw := string(engines.Output(buf))
	start := len(raw)
	for n := 0; n < jobproc.TailChars && start > 0; n++ {
		_, size := utf8.DecodeLastRuneInString(raw[:start])
		start -= size
	}
	return strings.TrimSpace(m.redact(m.cfg.Secrets.RedactRange(raw, start, len(raw)), t))
}
