package jobs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turncli/turncli/client/engines"
	"github.com/turncli/turncli/primary/store"
)

// TestEngineEnd: a driver's result line decides an engine job's outcome and report only when
// its process exited 0; a cancelled or timed-out job says so whatever its driver wrote.
func TestEngineEnd(t *testing.T) {
	zero, four, killed := 0, 4, 137
	success := store.JobResult{Outcome: OutcomeSuccess, ExitCode: &zero}
	long := strings.Repeat("é", maxRunErrorText) // 2 bytes each: cut at a rune boundary
	for _, tc := range []struct {
		name        string
		exit        store.JobResult
		r           engines.Result
		ok          bool
		wantOutcome string
		wantReport  string
	}{
		{"FinishedIsASuccessWithItsFinalMessage", success,
			engines.Result{Status: engines.StatusFinished, Report: "all done", StopReason: "success"}, true, OutcomeSuccess, "all done"},
		{"NoResultLineIsAFailure", success, engines.Result{}, false, OutcomeNoResult, ""},
		{"TheTurnCap", success, engines.Result{Status: engines.StatusFinished, IsError: true, StopReason: "error_max_turns"}, true,
			outcomeTurnLimit, ""},
		{"TheSpendingCap", success, engines.Result{Status: engines.StatusFinished, IsError: true, StopReason: "error_max_budget_usd"}, true,
			outcomeBudgetLimit, ""},
		{"AnErrorSaysItsFirstMessage", success, engines.Result{Status: engines.StatusFailed, Errors: []string{"API error 529", "second"}}, true,
			outcomeEngineError + ": API error 529", ""},
		{"AnErrorWithoutMessageSaysItsStopReason", success, engines.Result{Status: engines.StatusFinished, IsError: true, StopReason: "failed"}, true,
			outcomeEngineError + " (failed)", ""},
		{"ALongErrorIsCut", success, engines.Result{Status: engines.StatusFailed, Errors: []string{long + "tail"}}, true,
			outcomeEngineError + ": " + long[:maxRunErrorText] + "…", ""},
		{"AParkedRunThatCouldNotParkFails", success, engines.Result{Status: engines.StatusParked}, true, outcomeNotParked, ""},
		{"TheExitWinsOverTheResult", store.JobResult{Outcome: OutcomeCancelled},
			engines.Result{Status: engines.StatusFinished, Report: "all done"}, true, OutcomeCancelled, ""},
		{"ADriverThatFailedByItselfSaysWhy", store.JobResult{Outcome: "failed (exit 4)", ExitCode: &four},
			engines.Result{Status: engines.StatusFailed, Errors: []string{"the codex CLI is not on PATH"}}, true,
			outcomeEngineError + ": the codex CLI is not on PATH", ""},
		{"ADriverKilledByASignalSaysSo", store.JobResult{Outcome: "stopped by signal 9 (killed)", ExitCode: &killed},
			engines.Result{Status: engines.StatusFailed, Errors: []string{"stopped"}}, true, "stopped by signal 9 (killed)", ""},
		{"AFailedExitWithoutAResultKeepsItsExit", store.JobResult{Outcome: "failed (exit 4)", ExitCode: &four},
			engines.Result{}, false, "failed (exit 4)", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, report := engineEnd(tc.exit, nil, tc.r, tc.ok)
			if res.Outcome != tc.wantOutcome || report != tc.wantReport {
				t.Fatalf("outcome %q report %q, want %q %q", res.Outcome, report, tc.wantOutcome, tc.wantReport)
			}
			if (res.Run != nil) != tc.ok {
				t.Fatalf("run %+v with a result line %v", res.Run, tc.ok)
			}
		})
	}
}

// TestEngineRunAddsUpResumedRuns: the run of a job resumed after parking adds its turns, cost
// and tokens to the earlier runs', keeps its own session and stop reason, and is bounded.
func TestEngineRunAddsUpResumedRuns(t *testing.T) {
	prev := &store.EngineRun{Session: "s", Turns: 2, CostUSD: 0.25, InputTokens: 10, OutputTokens: 5, StopReason: "tool_deferred", Runs: 1}
	errs := []string{"1", "2", "3", "4", "5", "6"}
	run := engineRun(prev, engines.Result{Session: "s", Turns: 3, CostUSD: 0.5, InputTokens: 1, OutputTokens: 1, StopReason: "success", Errors: errs})
	want := store.EngineRun{Session: "s", Turns: 5, CostUSD: 0.75, InputTokens: 11, OutputTokens: 6, StopReason: "success", Runs: 2,
		Errors: errs[:maxRunErrors]}
	if run.Session != want.Session || run.Turns != want.Turns || run.CostUSD != want.CostUSD || run.InputTokens != want.InputTokens ||
		run.OutputTokens != want.OutputTokens || run.StopReason != want.StopReason || run.Runs != want.Runs || len(run.Errors) != maxRunErrors {
		t.Fatalf("run = %+v, want %+v", *run, want)
	}
	if neg := engineRun(nil, engines.Result{Turns: -1, CostUSD: -1}); neg.Turns != 0 || neg.CostUSD != 0 {
		t.Fatalf("negative counts kept: %+v", *neg)
	}
}

// TestEngineResultOfThisRun: the result line is read from the end of the log, and only from
// what this run wrote: an earlier run's line before a resume is not this run's.
func TestEngineResultOfThisRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "1.log")
	var b strings.Builder
	b.WriteString("progress\n")
	if err := engines.WriteResult(&b, engines.Result{Status: engines.StatusParked, Session: "s"}); err != nil {
		t.Fatal(err)
	}
	first := int64(b.Len())
	b.WriteString("resumed progress\n")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if r, ok := engineResult(path, 0); !ok || r.Status != engines.StatusParked {
		t.Fatalf("from the start: %+v %v, want the parked line", r, ok)
	}
	if r, ok := engineResult(path, first); ok {
		t.Fatalf("after the resume: %+v, want no result", r)
	}
}
