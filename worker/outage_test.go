package worker_test

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/internal/logging"
	"github.com/turncli/turncli/internal/logtest"
	"github.com/turncli/turncli/worker"
)

// An outage of the primary is one warning however many retries it takes, each retry a debug
// line, and an info line once the worker is connected again.
func TestAnOutageIsOneWarningAndOneLineWhenItEnds(t *testing.T) {
	var logs logtest.Buffer
	fp := startFakePrimary(t)
	logger, err := logging.New(&logs, logging.FormatJSON, "debug") // the daemon's own handler
	if err != nil {
		t.Fatal(err)
	}
	runWorker(t, fp, func(c *worker.Config) { c.Logger = logger })
	fp.welcome(t).end <- status.Error(codes.Unavailable, "primary restarting")
	const retries = 3
	for range retries {
		s, _ := fp.accept(t)
		s.end <- status.Error(codes.Unavailable, "still restarting")
	}
	s := fp.welcome(t)
	// The worker logs its welcome before it takes the first command.
	s.start(&workerv1.StartCommand{CommandId: "1", Agent: "tester", Command: `echo back`})
	if f := s.collect("1"); f.stdout != "back\n" {
		t.Fatalf("command after the outage = %+v", f)
	}

	var warnings, debugs []string
	var connected []map[string]any
	for _, line := range logs.Lines(t) {
		msg, _ := line["msg"].(string)
		switch {
		case line["level"] == "WARN" && msg != "shells are not isolated":
			warnings = append(warnings, msg)
		case line["level"] == "DEBUG" && msg == "still cannot reach the primary":
			debugs = append(debugs, msg)
			if _, ok := line["retry_in"].(string); !ok {
				t.Errorf("retry_in %v: want the duration as text", line["retry_in"])
			}
		case line["level"] == "INFO" && msg == "connected to primary":
			connected = append(connected, line)
		}
	}
	if len(warnings) != 1 || warnings[0] != "connection to primary ended" {
		t.Errorf("warnings %q, want one: connection to primary ended", warnings)
	}
	if len(debugs) != retries {
		t.Errorf("%d debug lines of retries, want %d", len(debugs), retries)
	}
	if len(connected) != 2 || connected[0]["failed_attempts"] != nil || connected[1]["failed_attempts"] != float64(retries+1) || connected[1]["reconnected_after"] == nil {
		t.Errorf("connected lines %v: want the second to say %d failed attempts and how long", connected, retries+1)
	}
}
