package hostkit_test

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"

	"github.com/turncli/turncli/hostkit"
	"github.com/turncli/turncli/internal/logging"
	"github.com/turncli/turncli/internal/logtest"
	"github.com/turncli/turncli/internal/testenv"
)

// A primary that cannot be reached for several attempts is one warning, each further retry a
// debug line, and the line that says the host is connected tells how many attempts failed.
func TestAnOutageIsOneWarningAndTheConnectedLineSaysHowLong(t *testing.T) {
	env := testenv.Start(t)
	var logs logtest.Buffer
	logger, err := logging.New(&logs, logging.FormatJSON, "debug")
	if err != nil {
		t.Fatal(err)
	}
	const refusals = 4
	var dials atomic.Int32
	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		if dials.Add(1) <= refusals {
			return nil, errors.New("connection refused")
		}
		return env.DialPrimary(ctx, addr)
	}
	h := runHost(t, env, func(c *hostkit.Config) {
		c.Logger = logger
		c.DialOptions = []grpc.DialOption{grpc.WithContextDialer(dial)}
	}, hostkit.Toolkit{Name: "outage_tk", Description: "Outage.", Functions: []hostkit.Function{hostkit.Func("add", "Adds", add)}})
	h.waitRegistered()
	h.stop()

	var warnings []string
	var debugs int
	var connected map[string]any
	for _, line := range logs.Lines(t) {
		msg, _ := line["msg"].(string)
		switch {
		case line["level"] == "WARN":
			warnings = append(warnings, msg)
		case line["level"] == "DEBUG" && msg == "still cannot reach the primary":
			debugs++
		case line["level"] == "INFO" && msg == "connected to primary":
			connected = line
		}
	}
	if len(warnings) != 1 || warnings[0] != "cannot reach the primary" {
		t.Errorf("warnings %q, want one: cannot reach the primary", warnings)
	}
	if int(dials.Load()) <= refusals || debugs < 1 {
		t.Fatalf("%d dials, %d debug lines: the refusals did not each fail an attempt", dials.Load(), debugs)
	}
	if connected == nil || connected["failed_attempts"] != float64(debugs+1) || connected["reconnected_after"] == nil {
		t.Errorf("connected line %v: want failed_attempts %d and reconnected_after", connected, debugs+1)
	}
}
