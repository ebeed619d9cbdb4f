package interaction_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/turncli/turncli/internal/enginetest"
	"github.com/turncli/turncli/internal/scriptedmodel/messages"
)

// BenchmarkClaudeAgentOverhead measures what a background agent adds to the real Claude
// Code's own run, against the same CLI run directly in the same benchmark (the baseline):
//
//   - start: from run_agent_in_background's call to the model's first request, beside the
//     CLI's own from its start to its first request (start-cli);
//   - report: from the model's final answer to the continuation a runtime receives, beside
//     the CLI's own from that answer to its exit (report-cli).
//
// The model answers at once, so both sides measure turncli and the CLI, not a model.
func BenchmarkClaudeAgentOverhead(b *testing.B) {
	cli := enginetest.Claude(b)
	script := make([]messages.Step, 0, 2*b.N)
	for range 2 * b.N {
		script = append(script, messages.Text("The report."))
	}
	model := messages.Start(b, script...)
	r := startEngine(b, "claude", cli, claudeEnv(model)...)
	var start, startCLI, report, reportCLI time.Duration
	for range b.N {
		// The CLI alone, as the driver would start it but without turncli around it.
		home := b.TempDir()
		cmd := exec.Command(cli, "-p", "--output-format", "stream-json", "--verbose", "--setting-sources", "", "--", "Report.")
		cmd.Dir = home
		cmd.Env = append(os.Environ(), "CLAUDE_CONFIG_DIR="+home, "ANTHROPIC_BASE_URL="+model.URL, "ANTHROPIC_API_KEY=scripted-model-key",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1")
		before := len(model.Requests())
		began := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("claude alone: %v\n%s", err, out)
		}
		exited := time.Now()
		first, last := mainRequests(b, model, before)
		startCLI += first.Received.Sub(began)
		reportCLI += exited.Sub(last.Answered)

		// The same run as a background agent.
		before = len(model.Requests())
		parent := openAs(b, r.env, stranger, "$bench")
		began = time.Now()
		jobID := startAgent(b, r.env, parent, "Report.", "bench")
		c := r.reports.awaitWithin(b, jobKey(jobID), engineBound)
		arrived := time.Now()
		if !strings.HasSuffix(c.GetText(), "The report.") {
			b.Fatalf("continuation %q", c.GetText())
		}
		first, last = mainRequests(b, model, before)
		start += first.Received.Sub(began)
		report += arrived.Sub(last.Answered)
	}
	per := func(d time.Duration) float64 { return float64(d.Milliseconds()) / float64(b.N) }
	b.ReportMetric(per(start), "start-ms")
	b.ReportMetric(per(startCLI), "start-cli-ms")
	b.ReportMetric(per(report), "report-ms")
	b.ReportMetric(per(reportCLI), "report-cli-ms")
	b.ReportMetric(0, "ns/op")
}

// mainRequests returns the first and last main-conversation requests after the first
// `before` requests.
func mainRequests(b *testing.B, model *messages.Server, before int) (first, last messages.Request) {
	b.Helper()
	var found bool
	for _, req := range model.Requests()[before:] {
		if !req.Main {
			continue
		}
		if !found {
			first, found = req, true
		}
		last = req
	}
	if !found {
		b.Fatal("the run made no request of the model")
	}
	return first, last
}
